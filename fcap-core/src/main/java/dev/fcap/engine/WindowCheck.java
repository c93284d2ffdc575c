package dev.fcap.engine;

import dev.fcap.model.Message;
import dev.fcap.store.Operation;
import java.time.ZoneId;
import java.util.Arrays;

/**
 * The send windows that apply to one message, judged at its decision time by the wall clock of each
 * window's zone (the message's own, for a window in the recipient's zone). Send windows keep no state:
 * the engine judges them before the store step, and a message outside an enforced one is refused
 * with nothing recorded (its counters are only read, for the rules' outcomes and {@code sendAt}).
 * Null where no window applies, so a policy without windows pays nothing.
 */
final class WindowCheck {
  /** The decision's time: the caller's, or the engine's clock for a decision at the store's time. */
  final long time;
  final ZoneId zone;
  /** The applicable window rules, in policy order (the plan's), and whether each is open. */
  final int[] rules;
  final boolean[] open;
  /** Per window, whether it may refuse this message (enforced, and the message not countOnly there nor an override). */
  final boolean[] enforced;
  /** Whether an enforced window is shut: the message is refused and nothing is recorded. */
  final boolean shut;

  private WindowCheck(long time, ZoneId zone, int[] rules, boolean[] open, boolean[] enforced, boolean shut) {
    this.time = time;
    this.zone = zone;
    this.rules = rules;
    this.open = open;
    this.enforced = enforced;
    this.shut = shut;
  }

  /** The check of {@code m}'s windows at {@code time}; null if none applies. */
  static WindowCheck of(CompiledPolicy cp, CompiledPolicy.Plan plan, Message m, long time) {
    if (plan.windows.length == 0) {
      return null;
    }
    ZoneId zone = cp.policy.zoneOf(m);
    boolean[] open = new boolean[plan.windows.length];
    boolean[] enforced = new boolean[open.length];
    boolean shut = false;
    for (int i = 0; i < open.length; i++) {
      int r = plan.windows[i];
      WindowSchedule s = cp.schedules[r];
      open[i] = s.isOpen(time, s.zoneFor(zone));
      enforced[i] = cp.rule(r).enforcedFor(m);
      shut |= !open[i] && enforced[i];
    }
    return new WindowCheck(time, zone, plan.windows, open, enforced, shut);
  }

  /** The operation a message's step takes: a DECIDE that a shut enforced window refuses only reads. */
  static Operation effective(Operation op, WindowCheck windows) {
    return op == Operation.DECIDE && windows != null && windows.shut ? Operation.CHECK : op;
  }

  /** When window {@code i} next opens at or after the decision: the decision's time if open; -1 never. */
  long opens(CompiledPolicy cp, int i) {
    WindowSchedule s = cp.schedules[rules[i]];
    return open[i] ? time : s.nextOpening(time, s.zoneFor(zone));
  }

  /** The most spans {@link #openSpans} lists: two a day for the longest deferral, with room to spare. */
  static final int MAX_SPANS = 256;

  /**
   * The instants in [{@code from}, {@code until}] at which every enforced window is open, as sorted
   * spans {@code [a, b]} (pairs of epoch ms, both ends inclusive), at most {@value #MAX_SPANS}; null
   * when no enforced window applies (every instant is open). A deferred message may be booked only
   * inside them ({@link dev.fcap.store.Booking}).
   */
  long[] openSpans(CompiledPolicy cp, long from, long until) {
    if (!anyEnforced()) {
      return null;
    }
    long[] spans = new long[16];
    int n = 0;
    long at = from;
    while (n < 2 * MAX_SPANS) {
      long opens = earliest(cp, at);
      if (opens < 0 || opens > until) {
        break;
      }
      long closes = Long.MAX_VALUE;
      for (int i = 0; i < rules.length; i++) {
        if (enforced[i]) {
          WindowSchedule s = cp.schedules[rules[i]];
          closes = Math.min(closes, s.nextClosing(opens, s.zoneFor(zone), until));
        }
      }
      if (n == spans.length) {
        spans = Arrays.copyOf(spans, 2 * n);
      }
      spans[n++] = opens;
      spans[n++] = closes == Long.MAX_VALUE ? until : closes - 1;
      if (closes > until) {
        break;
      }
      at = closes;
    }
    return Arrays.copyOf(spans, n);
  }

  private boolean anyEnforced() {
    for (boolean e : enforced) {
      if (e) {
        return true;
      }
    }
    return false;
  }

  /**
   * The earliest instant at or after {@code from} at which every enforced window is open (and so,
   * counters permitting, the message may go); -1 if {@code from} is -1 or no such instant is near.
   */
  long earliest(CompiledPolicy cp, long from) {
    WindowSchedule[] enforced = new WindowSchedule[rules.length];
    ZoneId[] zones = new ZoneId[rules.length];
    int n = 0;
    for (int i = 0; i < rules.length; i++) {
      if (this.enforced[i]) {
        enforced[n] = cp.schedules[rules[i]];
        zones[n++] = cp.schedules[rules[i]].zoneFor(zone);
      }
    }
    return SendAt.earliest(from, enforced, zones, n);
  }
}
