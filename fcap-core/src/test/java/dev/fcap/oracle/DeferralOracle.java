package dev.fcap.oracle;

import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.SendWindow;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * A deliberately naive model of deferred decisions (docs/algorithms.md, "Deferred decisions"), for
 * policies of sliding-log and fixed-window rules keyed by the recipient (alone or with the content)
 * or by the channel (one counter for every recipient: a partition of its own, booked at the same
 * instant as the recipient's), and send windows. A fixed window counts the messages recorded in the window that holds an
 * instant: epoch-aligned, or the local day, ISO week or month of its zone (the message's, for
 * {@code zone: recipient}) or a zoned window's run of local days, by java.time; a message is booked there at the first instant from which
 * its window has room.
 *
 * <p><b>Design.</b> Per log (rules with the same key share one) the model keeps the plain list of
 * what it holds, newest first, with the documented retention applied at every write: every entry
 * after the write's time (booked), then, before it, entries inside the longest window in force and
 * within the newest {@code capacity} cost units. A message at instant x is admitted by rule (L, W)
 * iff every window (s - W, s] with s in [x, x + W) holds at most L' with it (L' the limit less the
 * message's priority's headroom), tested at s = x and at every entry time in (x, x + W), where the
 * held cost can grow. A booking's instant is found by trying, in order, every instant where the
 * answer can change from no to yes: the decision's time, each entry's time plus each window, and,
 * under send windows, every whole minute up to {@code notAfter} (window bounds, offsets and
 * transitions are whole minutes), each tested in full.
 *
 * <p>As the engine does: a partition is never decided before its latest write (a step back of the
 * clock is decided there; the model keeps the recipient's partition's time only, so a policy with a
 * rule keyed by the channel is run on time that never goes back); send windows are judged at the caller's time (a booking's instant, at or
 * after the partition's, in them); a refusal's {@code sendAt} is the
 * first instant, from the latest instant its refusing rules free on their own, at which every window
 * is open; a retry of a remembered message id answers the first decision again.
 *
 * <p>Beside the model, a plainer check reads only what the system under test answered: every
 * admitted or booked message, at its instant, in a history that is never pruned (released and reset
 * ones removed); an answer that puts any window of any rule over its limit is an over-admission.
 */
public final class DeferralOracle {
  private static final long MINUTE_MS = 60_000;

  /** What a decision should be. */
  public record Expected(boolean allowed, boolean deferred, long sendAt, List<String> blockedBy, boolean replayed) {}

  private record Recorded(String recipient, List<String> logs, long time, long cost, String messageKey) {}

  /** A decision remembered under its message id, until {@code expiresAt} (by its partition's time). */
  private record Remembered(Expected answer, long expiresAt) {}

  private record Answer(List<String> keys, long time, long cost) {}

  private Policy policy;
  /** Per log: its entries {time, cost}, newest first, retention applied. */
  private final Map<String, List<long[]>> logs = new HashMap<>();
  /** Per rule and key values: every live message the system under test admitted or booked, never pruned. */
  private final Map<String, List<long[]>> answered = new HashMap<>();
  private final Map<String, Long> partitionTimes = new HashMap<>();
  private final Map<String, Recorded> recorded = new HashMap<>();
  /** Per decision id the system under test answered: its history keys and {time, cost}. */
  private final Map<String, Answer> answers = new HashMap<>();
  private final Map<String, Remembered> messageIds = new HashMap<>();
  /** How long a decision is remembered under its message id after it is recorded: 0, the policy's longest window. */
  private final long rememberMs;
  private long seen = Long.MIN_VALUE;

  /**
   * A model of an engine that remembers a message id for {@code rememberMs} after the instant it
   * recorded the message at (0: the policy's longest window, at most 7 days: an engine without
   * releases by decision id).
   */
  public DeferralOracle(Policy policy, long rememberMs) {
    this.policy = Objects.requireNonNull(policy);
    this.rememberMs = rememberMs;
  }

  public void setPolicy(Policy next) {
    policy = Objects.requireNonNull(next);
  }

  /** The answer the model expects for {@code m} at {@code now}; applies what it records under {@code id}. */
  public Expected decide(Message m, long now, String id) {
    seen = Math.max(seen, now);
    String messageKey = m.messageId() == null ? null : m.recipient() + "\u0000" + m.messageId();
    long t = Math.max(now, partitionTimes.getOrDefault(m.recipient(), Long.MIN_VALUE));
    Remembered remembered = messageKey == null ? null : messageIds.get(messageKey);
    if (remembered != null && t < remembered.expiresAt()) {
      Expected first = remembered.answer();
      return new Expected(first.allowed(), first.deferred(), first.sendAt(), null, true);
    }
    List<String> blocked = new ArrayList<>();
    boolean countersAdmit = true;
    boolean openNow = true;
    for (Rule r : policy.rules()) {
      if (r.isSendWindow()) {
        if (!open(r.sendWindow(), m, now)) {
          openNow = false;
          blocked.add(r.id());
        }
      } else if (!admits(r, m, t)) {
        countersAdmit = false;
        blocked.add(r.id());
      }
    }
    boolean deferred = m.defer() != null;
    if (countersAdmit && openNow) {
      record(m, t, t, id, messageKey, new Expected(true, false, 0, List.of(), true));
      return new Expected(true, false, 0, List.of(), false);
    }
    if (deferred && !fullOfBookings(m, t)) {
      long notAfter = m.defer().hasNotAfter() ? m.defer().notAfter() : now + messageHorizon();
      long at = earliestBooking(m, t, notAfter);
      if (at >= 0) {
        record(m, t, at, id, messageKey, new Expected(false, true, at, null, true));
        return new Expected(false, true, at, blocked, false);
      }
    }
    return new Expected(false, false, refusedSendAt(m, t), blocked, false);
  }

  /** The system under test released decision {@code id} (admitted or booked): it gives its entries back. */
  public void release(String id) {
    Recorded r = recorded.remove(id);
    if (r == null) {
      return;
    }
    for (String key : r.logs()) {
      removeOne(logs.get(key), r.time(), r.cost());
    }
    if (r.messageKey() != null) {
      messageIds.remove(r.messageKey());
    }
    partitionTimes.merge(r.recipient(), seen, Math::max); // the release writes at the latest caller time
  }

  /** The system under test released {@code id}: its answer leaves the history of answers. */
  public void releaseAnswer(String id) {
    Answer a = answers.remove(id);
    if (a != null) {
      for (String key : a.keys()) {
        removeOne(answered.get(key), a.time(), a.cost());
      }
    }
  }

  /** Whether decision {@code id} is one the model recorded and has not released. */
  public boolean holds(String id) {
    return recorded.containsKey(id);
  }

  /** The recipient is forgotten: its logs, partition time, decisions and message ids. */
  public void reset(String recipient) {
    String mark = "\u0000" + recipient + "\u0000";
    logs.keySet().removeIf(k -> k.contains(mark));
    answered.keySet().removeIf(k -> k.contains(mark));
    partitionTimes.remove(recipient);
    recorded.values().removeIf(r -> r.recipient().equals(recipient));
    answers.values().removeIf(a -> a.keys().stream().anyMatch(k -> k.contains(mark)));
    messageIds.keySet().removeIf(k -> k.startsWith(recipient + "\u0000"));
  }

  /**
   * The plainer check: {@code actual} (for {@code m}) admitted or booked a message at an instant at
   * which some window of some rule, in the never-pruned history of answers, would hold more than its
   * limit. Adds the message to that history.
   */
  public boolean overAdmits(Message m, Decision actual) {
    if (actual.replayed() || !actual.allowed() && !actual.deferred()) {
      return false;
    }
    long at = actual.deferred() ? actual.sendAt() : actual.time();
    boolean over = false;
    List<String> keys = new ArrayList<>();
    for (Rule r : policy.rules()) {
      if (r.isSendWindow()) {
        continue;
      }
      String key = r.id() + logKey(r, m);
      keys.add(key);
      List<long[]> history = answered.computeIfAbsent(key, k -> new ArrayList<>());
      history.add(new long[] {at, m.cost()});
      over |= (fixed(r) ? inWindow(history, window(r, m, at)) : fullest(history, r.windowMs(), at)) > r.limit();
    }
    answers.put(actual.decisionId(), new Answer(keys, at, m.cost()));
    return over;
  }

  private void record(Message m, long t, long at, String id, String messageKey, Expected replay) {
    partitionTimes.put(m.recipient(), t);
    List<String> written = new ArrayList<>();
    for (Rule r : policy.rules()) {
      String key = r.isSendWindow() ? null : identity(r) + logKey(r, m);
      if (key == null || written.contains(key)) {
        continue; // a shared log is written once
      }
      written.add(key);
      List<long[]> log = logs.computeIfAbsent(key, k -> new ArrayList<>());
      int pos = 0;
      while (pos < log.size() && log.get(pos)[0] > at) {
        pos++;
      }
      log.add(pos, new long[] {at, m.cost()});
      if (!fixed(r)) {
        prune(log, t, r); // a fixed window's count is its window's: what ended is never read again
      }
    }
    recorded.put(id, new Recorded(m.recipient(), written, at, m.cost(), messageKey));
    if (messageKey != null) {
      messageIds.put(messageKey, new Remembered(replay, at + (rememberMs > 0 ? rememberMs : messageHorizon())));
    }
  }

  /** The documented retention, at a write at {@code t}, by the log's group as the policy has it now. */
  private void prune(List<long[]> log, long t, Rule member) {
    long maxWindow = 0;
    long capacity = 0;
    for (Rule r : policy.rules()) {
      if (!r.isSendWindow() && identity(r).equals(identity(member))) {
        maxWindow = Math.max(maxWindow, r.windowMs());
        capacity = Math.max(capacity, r.limit());
      }
    }
    int keep = 0;
    while (keep < log.size() && log.get(keep)[0] > t) {
      keep++;
    }
    long newer = 0;
    while (keep < log.size() && log.get(keep)[0] > t - maxWindow && newer < capacity) {
      newer += log.get(keep)[1];
      keep++;
    }
    log.subList(keep, log.size()).clear();
  }

  private boolean admits(Rule r, Message m, long x) {
    long bound = r.boundFor(m.priority());
    if (m.cost() > bound) {
      return false;
    }
    List<long[]> log = logs.getOrDefault(identity(r) + logKey(r, m), List.of());
    return (fixed(r) ? inWindow(log, window(r, m, x)) : fullest(log, r.windowMs(), x)) + m.cost() <= bound;
  }

  /** The documented bound: a counter holds at most this many bookings, and a deferral past it books nothing. */
  static final int MAX_BOOKINGS = 256;

  /** Whether a counter {@code m} joins holds {@link #MAX_BOOKINGS} bookings at {@code t}: a log's entries after t, a fixed window's windows after t's. */
  private boolean fullOfBookings(Message m, long t) {
    for (Rule r : policy.rules()) {
      if (r.isSendWindow()) {
        continue;
      }
      List<long[]> log = logs.getOrDefault(identity(r) + logKey(r, m), List.of());
      long next = fixed(r) ? window(r, m, t)[1] : 0;
      long booked = fixed(r) ? log.stream().filter(e -> e[0] >= next).map(e -> window(r, m, e[0])[0])
          .distinct().count() : log.stream().filter(e -> e[0] > t).count();
      if (booked >= MAX_BOOKINGS) {
        return true;
      }
    }
    return false;
  }

  private static boolean fixed(Rule r) {
    return r.algorithm() == Algorithm.FIXED_WINDOW;
  }

  /**
   * The window of fixed-window rule {@code r} that holds {@code x}, {start, end}: the local day, ISO
   * week or month of its zone (the message's for {@code zone: recipient}, UTC without one), or a
   * zoned window's run of local days, computed by {@link Oracle#period} from java.time alone, else
   * epoch-aligned windows of its length.
   */
  private long[] window(Rule r, Message m, long x) {
    CalendarUnit unit = Oracle.calendarOf(r);
    if (unit == null) {
      long start = Math.floorDiv(x, r.windowMs()) * r.windowMs();
      return new long[] {start, start + r.windowMs()};
    }
    ZoneId zone = r.recipientZone() ? policy.zoneOf(m) : r.zone() != null ? r.zone() : java.time.ZoneOffset.UTC;
    return Oracle.period(unit, Oracle.daysOf(r), zone, x);
  }

  /** What {@code window} ({start, end}) holds. */
  private static long inWindow(List<long[]> entries, long[] window) {
    long sum = 0;
    for (long[] e : entries) {
      if (e[0] >= window[0] && e[0] < window[1]) {
        sum += e[1];
      }
    }
    return sum;
  }

  /** The instant after {@code entry}'s at which rule {@code r}'s count may next change by time alone. */
  private long nextFree(Rule r, Message m, long[] entry) {
    return fixed(r) ? window(r, m, entry[0])[1] : entry[0] + r.windowMs();
  }

  /** The most any window (s - W, s] with s in [x, x + W) holds: at s = x, or where an entry enters. */
  private static long fullest(List<long[]> entries, long window, long x) {
    long most = held(entries, window, x);
    for (long[] e : entries) {
      if (e[0] > x && e[0] < x + window) {
        most = Math.max(most, held(entries, window, e[0]));
      }
    }
    return most;
  }

  private static long held(List<long[]> entries, long window, long s) {
    long sum = 0;
    for (long[] e : entries) {
      if (e[0] > s - window && e[0] <= s) {
        sum += e[1];
      }
    }
    return sum;
  }

  private long earliestBooking(Message m, long t, long notAfter) {
    if (t > notAfter) {
      return -1;
    }
    TreeSet<Long> candidates = new TreeSet<>();
    candidates.add(t);
    boolean windows = policy.rules().stream().anyMatch(Rule::isSendWindow);
    boolean wasOpen = allOpen(m, t);
    for (long minute = Math.floorDiv(t, MINUTE_MS) * MINUTE_MS + MINUTE_MS; windows && minute <= notAfter;
        minute += MINUTE_MS) {
      boolean open = allOpen(m, minute);
      if (open && !wasOpen) {
        candidates.add(minute); // the windows open together here
      }
      wasOpen = open;
    }
    for (Rule r : policy.rules()) {
      if (r.isSendWindow()) {
        continue;
      }
      for (long[] e : logs.getOrDefault(identity(r) + logKey(r, m), List.of())) {
        long frees = nextFree(r, m, e);
        if (frees > t && frees <= notAfter) {
          candidates.add(frees);
        }
      }
    }
    for (Iterator<Long> it = candidates.iterator(); it.hasNext(); ) {
      long x = it.next();
      if (allOpen(m, x) && everyRuleAdmits(m, x)) {
        return x;
      }
    }
    return -1;
  }

  private boolean everyRuleAdmits(Message m, long x) {
    for (Rule r : policy.rules()) {
      if (!r.isSendWindow() && !admits(r, m, x)) {
        return false;
      }
    }
    return true;
  }

  /** A plain refusal's sendAt: from the latest instant a refusing rule frees alone, the first with every window open. */
  private long refusedSendAt(Message m, long t) {
    long frees = t;
    List<SendWindow> windows = new ArrayList<>();
    List<ZoneId> zones = new ArrayList<>();
    for (Rule r : policy.rules()) {
      if (r.isSendWindow()) {
        windows.add(r.sendWindow());
        zones.add(zoneOf(r.sendWindow(), m));
      } else if (!admits(r, m, t)) {
        if (m.cost() > r.boundFor(m.priority())) {
          return -1;
        }
        long x = t;
        while (!admits(r, m, x)) {
          long next = Long.MAX_VALUE;
          for (long[] e : logs.getOrDefault(identity(r) + logKey(r, m), List.of())) {
            if (nextFree(r, m, e) > x) {
              next = Math.min(next, nextFree(r, m, e));
            }
          }
          x = next;
        }
        frees = Math.max(frees, x);
      }
    }
    return windows.isEmpty() ? frees : Oracle.earliestOpen(windows, zones, frees);
  }

  private boolean allOpen(Message m, long x) {
    for (Rule r : policy.rules()) {
      if (r.isSendWindow() && !open(r.sendWindow(), m, x)) {
        return false;
      }
    }
    return true;
  }

  private boolean open(SendWindow w, Message m, long x) {
    return Oracle.inside(w, zoneOf(w, m), x);
  }

  private ZoneId zoneOf(SendWindow w, Message m) {
    return w.recipientZone() ? policy.zoneOf(m) : w.zone();
  }

  private long messageHorizon() {
    long longest = 1;
    for (Rule r : policy.rules()) {
      longest = Math.max(longest, r.windowMs());
    }
    return Math.min(longest, 7L * 86_400_000);
  }

  private static void removeOne(List<long[]> entries, long time, long cost) {
    if (entries == null) {
      return;
    }
    for (int i = 0; i < entries.size(); i++) {
      if (entries.get(i)[0] == time && entries.get(i)[1] == cost) {
        entries.remove(i);
        return;
      }
    }
  }

  /** Sliding-log rules with the same key share one log (no rule here has a selection of its own). */
  private static String identity(Rule r) {
    return fixed(r) ? "fixed " + r.id() + r.key() : r.key().toString();
  }

  /**
   * The counter's key values: the recipient's (for {@link #reset}, which forgets only its recipient's
   * partition), the content's, the channel's: a rule keyed by the channel alone is shared by every
   * recipient.
   */
  private static String logKey(Rule r, Message m) {
    return "\u0000" + (r.key().contains(Dimension.RECIPIENT) ? m.recipient() : "") + "\u0000"
        + (r.key().contains(Dimension.CONTENT) ? m.content() : "") + "\u0000"
        + (r.key().contains(Dimension.CHANNEL) ? m.channel() : "");
  }
}
