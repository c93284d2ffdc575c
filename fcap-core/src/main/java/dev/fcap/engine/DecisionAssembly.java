package dev.fcap.engine;

import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Rule;
import dev.fcap.model.Suppression;
import dev.fcap.model.RuleOutcome;
import dev.fcap.model.RuleOutcomes;
import dev.fcap.store.Booking;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionAnswer;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.time.Clock;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Builds a {@link Decision} from the store's answers: each rule's outcome in policy order, the
 * enforced rules that block, the delay after which every one of them would admit, and the decision
 * id (sealed over the release record when the decision is releasable, random otherwise).
 */
final class DecisionAssembly {
  private final DecisionIds ids;
  private final Clock clock;
  /** How long admitted decisions stay releasable by decision id: -1 the policy's longest window, 0 never. */
  private final long releaseHorizonMs;

  DecisionAssembly(DecisionIds ids, Clock clock, long releaseHorizonMs) {
    this.ids = ids;
    this.clock = clock;
    this.releaseHorizonMs = releaseHorizonMs;
  }

  /**
   * The decision on a message no counter applies to: admitted and releasable (it undoes nothing) when
   * releases are on, unless an enforced send window is shut.
   */
  Decision unrestricted(Prepared p) {
    if (p.windows() != null) {
      return decision(p, NO_ANSWERS);
    }
    long time = p.time() == PartitionRequest.STORE_TIME ? clock.millis() : p.time();
    if (p.suppressed() != null) {
      long sendAt = p.suppressed().expiresAt(); // no rule refuses: the entry's expiry alone
      return new Decision(false, null, sendAt < 0 ? -1 : sendAt - time, SUPPRESSED, List.of(), List.of(), false,
          time, p.policy() == null ? 0 : p.policy().policy.version(), false, sendAt, null, p.suppressed().reason());
    }
    return new Decision(true, unrestrictedId(p, time), 0, List.of(), List.of(), List.of(), false, time,
        p.policy() == null ? 0 : p.policy().policy.version(), false, 0);
  }

  /** The id of an admitted decision that undoes nothing: releasable when releases are on, else null (random). */
  private String unrestrictedId(Prepared p, long now) {
    if (!p.releasing() || p.op() != Operation.DECIDE) {
      return null;
    }
    long horizon = releaseHorizonMs < 0 ? CompiledPolicy.MAX_HORIZON_MS : releaseHorizonMs;
    byte[] tenant = p.policy() != null ? p.policy().tenantUtf8 : p.message().tenant().getBytes(StandardCharsets.UTF_8);
    byte[] unique = Keys.random16(new byte[16]); // no record is kept under it: it only makes the id unique
    return ids.seal(Keys.nothingPartition(tenant), unique, now + horizon);
  }

  private static final PartitionAnswer[] NO_ANSWERS = {};
  private static final List<String> SUPPRESSED = List.of(Suppression.BLOCKED_BY);

  /**
   * The decision on {@code p} from the answers of its partitions (null: not reached by a replayed
   * decision; none: no counter applies). A refusal's {@code sendAt} is the earliest instant at or
   * after the decision at which every enforced rule admits: the latest instant an enforced counter
   * frees (each partition decided at its own time, never before its latest write: an instant is what
   * they agree on, a delay is not), then the first instant from there at which every enforced send
   * window is open (counters, once free, stay free while nothing else is sent).
   */
  Decision decision(Prepared p, PartitionAnswer[] results) {
    return decision(p, results, null);
  }

  /**
   * {@link #decision(Prepared, PartitionAnswer[])}, its outcomes built in the list of {@code scratch}
   * (null: a list of their own), which the decision keeps the numbers of, not the list.
   */
  Decision decision(Prepared p, PartitionAnswer[] results, Scratch scratch) {
    CompiledPolicy.Plan plan = p.plan();
    boolean replayed = results.length > 0 && results[0].replayOf() != null;
    // a replayed decision answers as it was decided: its windows were judged then
    WindowCheck windows = replayed ? null : p.windows();
    long time = results.length > 0 ? results[0].time() : windows.time;
    // without windows or a replay, every counting rule has its outcome, kept as numbers (RuleOutcomes)
    RuleOutcomes compact = windows != null || replayed ? null : scratch == null
        ? new RuleOutcomes(plan.counted, p.message(), refusals(plan, results))
        : scratch.outcomes(plan.counted, p.message(), refusals(plan, results));
    RuleOutcome[] outcomes = compact == null ? new RuleOutcome[plan.rules.length] : null;
    int[] ruleOf = windows == null ? null : new int[plan.rules.length]; // each outcome's rule, to merge the windows in
    int reported = 0;
    long frees = time; // the latest instant an enforced counter that refuses frees, never before the decision
    boolean never = false; // an enforced counter that refuses will never admit
    List<String> blocked = List.of();
    List<String> shadowBlocked = List.of();
    for (int i = 0; i < plan.rules.length; i++) {
      PartitionAnswer r = results[plan.rulePartition[i]];
      if (r == null) {
        continue; // a replay reports the rules of the partition that remembered it
      }
      Rule rule = plan.counted.get(i);
      boolean enforced = rule.enforcedFor(p.message()); // not for a countOnly message or an override
      int at = plan.ruleOffset[i];
      long used = r.used(at);
      long retryAt = r.retryAt(at);
      boolean allowed = r.admits(at);
      // each partition decides at its own time (never before its latest write): the delay is from there
      long ruleRetry = allowed ? 0 : retryAt == PartitionResult.NEVER ? -1 : retryAt - r.time();
      long ruleSendAt = allowed ? 0 : ruleRetry < 0 ? -1 : retryAt;
      if (compact != null) {
        compact.add(allowed, used, ruleRetry, ruleSendAt);
        if (!allowed) { // in policy order
          if (enforced) {
            blocked = append(blocked, p.policy().ruleIdAlone(plan.rules[i]));
          } else {
            shadowBlocked = append(shadowBlocked, p.policy().ruleIdAlone(plan.rules[i]));
          }
        }
      } else {
        if (ruleOf != null) {
          ruleOf[reported] = plan.rules[i];
        }
        outcomes[reported++] = new RuleOutcome(rule.id(), rule.limit(), rule.windowMs(), used,
            Math.max(0, rule.limit() - used), allowed, enforced, ruleRetry, ruleSendAt,
            rule.boundFor(p.message().priority()));
      }
      if (!allowed && enforced) {
        never |= ruleRetry < 0;
        frees = Math.max(frees, retryAt); // an instant: partitions decided at different times agree on it
      }
    }
    List<RuleOutcome> rules = compact;
    if (compact == null) {
      rules = windows != null ? windowOutcomes(p, time, outcomes, ruleOf, reported)
          : List.of(reported == outcomes.length ? outcomes : Arrays.copyOf(outcomes, reported));
      for (int i = 0; i < rules.size(); i++) { // in policy order
        RuleOutcome r = rules.get(i);
        if (!r.allowed()) {
          if (r.enforced()) {
            blocked = append(blocked, List.of(r.id()));
          } else {
            shadowBlocked = append(shadowBlocked, List.of(r.id()));
          }
        }
      }
    }
    Suppression suppressed = p.suppressed() != null ? p.suppressed() : suppressedIn(results);
    if (suppressed != null) { // refused until the entry expires, and from then as the rules say
      never |= suppressed.expiresAt() == Suppression.NEVER;
      frees = Math.max(frees, suppressed.expiresAt());
      blocked = prepend(blocked);
    }
    boolean allowed = blocked.isEmpty();
    long sendAt = allowed ? 0 : never ? -1 : windows == null ? frees : windows.earliest(p.policy(), frees);
    boolean degraded = false;
    for (PartitionAnswer r : results) {
      degraded |= r != null && r.degraded();
    }
    long bookedAt = results.length > 0 ? results[0].bookedAt() : deferredOpening(p, sendAt, suppressed);
    if (bookedAt != 0) { // not now: booked for later, and released by its id
      String id = results.length > 0 ? releasableId(p, results[0]) : unrestrictedId(p, time);
      return Decision.deferred(id, bookedAt - time, blocked, shadowBlocked, rules, degraded, time,
          p.policy().policy.version(), replayed, bookedAt);
    }
    byte[] idOnRead = allowed && results.length > 0 ? plainToSealOnRead(p, results[0]) : null;
    if (idOnRead != null) {
      return Decision.withIdMadeOnRead(ids.sealing(), idOnRead, true, 0, blocked, shadowBlocked, rules, degraded,
          time, p.policy().policy.version(), replayed, 0, null);
    }
    String id = !allowed ? null : results.length > 0 ? releasableId(p, results[0]) : unrestrictedId(p, time);
    return new Decision(allowed, id, allowed ? 0 : sendAt < 0 ? -1 : sendAt - time, blocked,
        shadowBlocked, rules, degraded, time, p.policy().policy.version(), replayed, sendAt, null,
        suppressed == null ? null : suppressed.reason());
  }

  /**
   * For a deferred message no counter applies to, refused now by a shut send window alone: the
   * windows' next common opening {@code sendAt}, if it is by the deferral's {@code notAfter} (nothing
   * is counted, so that is the booking); else 0.
   */
  private static long deferredOpening(Prepared p, long sendAt, Suppression suppressed) {
    Booking booking = p.booking();
    return booking != null && suppressed == null && sendAt > 0 && sendAt <= booking.notAfter() ? sendAt : 0;
  }

  /**
   * The plain text of the id of an admitted decision whose id seals its release (the usual decision),
   * to seal when first read; null when it gets another id: sealing costs about a tenth of a
   * decision's CPU and the id's string, and a caller that only asks whether to send never reads the id.
   */
  private byte[] plainToSealOnRead(Prepared p, PartitionAnswer first) {
    if (p.sealedTail() == null || p.recordKey() == null || !p.releasing() || first.replayOf() != null
        || !p.releasable()) {
      return null;
    }
    return ids.plainToSealOnRead(p.firstPartition(), p.recordKey(), first.time() + p.recordHorizonMs(), first.time(),
        first.incarnation(), p.sealedTail());
  }

  /**
   * The first {@code n} outcomes of counting rules ({@code ruleOf}: their rules) and the outcomes of the
   * message's send windows, merged in policy order; a window reports its limit and window as 0, and
   * when shut the delay to its next opening.
   */
  private static List<RuleOutcome> windowOutcomes(Prepared p, long time, RuleOutcome[] counted, int[] ruleOf, int n) {
    WindowCheck w = p.windows();
    RuleOutcome[] all = new RuleOutcome[n + w.rules.length];
    int c = 0;
    int k = 0;
    for (int o = 0; o < all.length; o++) {
      if (k == w.rules.length || c < n && ruleOf[c] < w.rules[k]) {
        all[o] = counted[c++];
        continue;
      }
      Rule rule = p.policy().rule(w.rules[k]);
      // judged at the message's time; a partition decided later (a clock step back) moves the answer there
      long next = w.opens(p.policy(), k);
      long opens = next < 0 ? -1 : Math.max(next, time);
      boolean open = w.open[k++];
      all[o] = new RuleOutcome(rule.id(), 0, 0, 0, 0, open, w.enforced[k - 1], open ? 0 : opens < 0 ? -1 : opens - time,
          open ? 0 : opens);
    }
    return List.of(all);
  }

  /**
   * The id an admitted decision is released by, sealed over its release record; null when it has
   * none. A replay answers the id of the first decision: the same record sealed the same way.
   */
  private String releasableId(Prepared p, PartitionAnswer first) {
    if (p.recordKey() == null || !p.releasing()) {
      return null;
    }
    boolean releasable = first.replayOf() != null
        ? ReleaseRecord.decode(first.replayOf().getBytes(StandardCharsets.ISO_8859_1)) != null
        : p.releasable();
    if (!releasable) {
      return null;
    }
    long recordedAt = first.recordedAt(); // a booking is released at its booked instant, and kept as long after it
    long expiresAt = recordedAt + p.recordHorizonMs();
    return p.sealedTail() != null
        ? ids.seal(p.firstPartition(), p.recordKey(), expiresAt, recordedAt, first.incarnation(), p.sealedTail())
        : ids.seal(p.firstPartition(), p.recordKey(), expiresAt);
  }

  /**
   * Reports each rule's verdict to {@code verdicts} (a caller that tallies instead of building a
   * {@link Decision}); whether the message was admitted.
   */
  static boolean report(CompiledPolicy policy, CompiledPolicy.Plan plan, Message m, PartitionAnswer[] results,
      WindowCheck windows, Engine.RuleVerdicts verdicts) {
    boolean allowed = true;
    boolean replayed = results.length > 0 && results[0].replayOf() != null;
    int k = 0;
    for (int i = 0; i < plan.rules.length; i++) {
      for (; windows != null && !replayed && k < windows.rules.length && windows.rules[k] < plan.rules[i]; k++) {
        allowed &= reportWindow(windows, k, verdicts);
      }
      PartitionAnswer r = results[plan.rulePartition[i]];
      if (r != null) { // null: a replayed decision reports the rules of the partition that remembered it
        boolean admits = r.admits(plan.ruleOffset[i]);
        boolean enforced = policy.rule(plan.rules[i]).enforcedFor(m);
        verdicts.rule(plan.rules[i], admits, enforced);
        allowed &= admits || !enforced;
      }
    }
    for (; windows != null && !replayed && k < windows.rules.length; k++) {
      allowed &= reportWindow(windows, k, verdicts);
    }
    if (results.length > 0 && results[0] != null && results[0].bookedAt() != 0) {
      verdicts.booked(results[0].bookedAt()); // a retry of a booked message id: booked, not admitted
      return false;
    }
    return allowed && suppressedIn(results) == null;
  }

  /**
   * Reports a decision made in full to {@code verdicts}, as {@link #report(CompiledPolicy,
   * CompiledPolicy.Plan, Message, PartitionAnswer[], WindowCheck, Engine.RuleVerdicts)} does from the
   * answers, its booking last; whether it was admitted. A rule is found by its id in the policy it
   * was decided under.
   */
  static boolean report(CompiledPolicy policy, Decision d, Engine.RuleVerdicts verdicts) {
    for (RuleOutcome o : d.rules()) {
      for (int i = 0; i < policy.rules.length; i++) {
        if (policy.rules[i].id().equals(o.id())) {
          verdicts.rule(i, o.allowed(), o.enforced());
          break;
        }
      }
    }
    if (d.deferred()) {
      verdicts.booked(d.sendAt());
    }
    return d.allowed();
  }

  /** The suppression entry a store that checks in its step answered (the recipient's partition's), or null. */
  private static Suppression suppressedIn(PartitionAnswer[] results) {
    for (PartitionAnswer r : results) {
      if (r != null && r.suppressed() != null) {
        return r.suppressed();
      }
    }
    return null;
  }

  private static boolean reportWindow(WindowCheck windows, int k, Engine.RuleVerdicts verdicts) {
    verdicts.rule(windows.rules[k], windows.open[k], windows.enforced[k]);
    return windows.open[k] || !windows.enforced[k];
  }

  /** {@link Suppression#BLOCKED_BY} then the rules in {@code blocked}: suppression reads first. */
  private static List<String> prepend(List<String> blocked) {
    if (blocked.isEmpty()) {
      return SUPPRESSED;
    }
    String[] all = new String[blocked.size() + 1];
    all[0] = Suppression.BLOCKED_BY;
    for (int i = 0; i < blocked.size(); i++) {
      all[i + 1] = blocked.get(i);
    }
    return List.of(all);
  }

  /**
   * An immutable list plus one id, given as the list of it alone: lists of blocking rules are short
   * and usually of one rule, whose list the policy keeps.
   */
  private static List<String> append(List<String> list, List<String> alone) {
    if (list.isEmpty()) {
      return alone;
    }
    String[] grown = list.toArray(new String[list.size() + 1]);
    grown[list.size()] = alone.get(0);
    return List.of(grown);
  }

  /** How many of the plan's counting rules the answers refuse (a replay's missing answers none). */
  private static int refusals(CompiledPolicy.Plan plan, PartitionAnswer[] results) {
    int refused = 0;
    for (int i = 0; i < plan.rules.length; i++) {
      PartitionAnswer r = results[plan.rulePartition[i]];
      refused += r != null && !r.admits(plan.ruleOffset[i]) ? 1 : 0;
    }
    return refused;
  }
}
