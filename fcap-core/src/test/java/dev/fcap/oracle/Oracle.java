package dev.fcap.oracle;

import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Condition;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcome;
import dev.fcap.model.SendWindow;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.TemporalAdjusters;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A deliberately naive model of what fcap must answer (docs/algorithms.md).
 *
 * <p><b>Design.</b> Per counter the oracle keeps the plain list of what happened to it (every record
 * and every release, with its time and cost) and recomputes each answer from scratch: no packed
 * state, no incremental sums. The counter identity follows the documented sharing: sliding-log rules
 * with the same key, match and exempt share one log; every other rule has a counter of its own; the
 * tenant and the values of the key name one counter. Per algorithm:
 *
 * <ul>
 *   <li>{@code sliding-log}: exact. The costs recorded in (t - W, t] (entries "in the future" after
 *       a clock step back included) plus c are at most L. What the log still holds follows the
 *       documented retention: at every write, entries outside the longest window in force and beyond
 *       the newest {@code capacity} cost units are forgotten.
 *   <li>{@code sliding-counter}: within its stated bound, checked on the engine's own answer: an
 *       admission leaves at most L in (t - W, t]; a refusal needs more than L over the longer window
 *       W + w - 1.
 *   <li>{@code fixed-window}: the count of the window holding the newest recorded message (aligned to
 *       the epoch), recomputed by folding the counter's list. A calendar rule's window for a request is
 *       the local day, ISO week or month of its zone (the message's own, for a recipient-zone rule),
 *       or for a window of several whole days in a zone the run of that many local dates from a
 *       multiple of them in epoch days, holding the request's time, found with java.time
 *       ({@link #period}); the count carries on while
 *       the newest recorded message lies in the current message's period, so a zone change between
 *       messages is judged by each message's own period. A release by decision id gives a
 *       recipient-zone period back in the zone its message carried (its release record names it).
 *   <li>{@code gcra}: the theoretical arrival time, recomputed by folding the counter's list with the
 *       emission interval T = ceil(W / L) microseconds.
 * </ul>
 *
 * <p>Beside that model, a second, plainer check reads only the full history of admitted messages
 * (released and reset ones removed, never pruned): an admission must not put any window of length W
 * that holds it (sliding algorithms), or its calendar window (fixed window), over the limit. An
 * admission the model refuses, or that breaks this check, is an over-admission; any other
 * difference is a mismatch. The oracle never asserts: {@link OracleRun} counts, tests assert.
 *
 * <p><b>Send windows and zones.</b> A send window holds an instant iff the wall clock of its zone (the
 * window's own, or the recipient's: {@link Policy#zoneOf}) at that instant is inside one of its
 * intervals, read with {@link LocalDateTime#ofInstant} and tested against the documented definition
 * (a midnight-spanning interval by the date it opened). It is read at the decision's time (the time
 * the answer carries: the caller's, or the recipient's partition's after a clock step back, at which
 * the message is decided and recorded). A message outside an enforced window is refused and nothing
 * is recorded anywhere. A counter that refuses frees at an instant of its own partition's time line
 * (its rule's {@code sendAt}); a refused decision's {@code sendAt} is found by brute force: from the
 * latest of those instants (counters free monotonically when nothing else is sent; never before the
 * decision's time), every whole minute in turn, passing over those a window is shut for as a whole,
 * until every enforced window is open (see {@link #earliestOpen}); its {@code retryAfterMs} is that
 * instant less the decision's time.
 *
 * <p>A decision is all-or-nothing over the enforced rules; shadow rules report but never block.
 * Partitions (the recipient's first, then one per key of the rules keyed without the recipient, in
 * policy order) are decided one after another: if one refuses, the earlier ones recorded the message
 * and released it again, which the oracle replays as a record and a release (a log prunes at the record
 * only; a release drops its own entry and nothing else, counted by the rules in force at the release).
 *
 * <p><b>Clock steps back.</b> Per partition, time never runs backwards: each partition remembers the
 * latest time it was written at (a record, a release; a reset forgets it), and a request earlier than
 * that is decided, recorded and judged at that time, each partition of a decision by its own
 * (docs/algorithms.md, "Clock steps back"). A calendar rule's period is still the one holding the
 * request's own time, as the engine does.
 */
public final class Oracle {
  private static final long NEVER = -1;

  private enum Kind { RECORD, RELEASE }

  /**
   * One thing that happened to a counter at {@code time}, with the rule's spec in force then; a
   * release undoes the message recorded at {@code eventTime}.
   */
  /** One operation on a counter; {@code calendar}, {@code days} and {@code zone}: a calendar rule's ({@link #calendarOf}), else null. */
  private record Op(Kind kind, long time, long eventTime, long cost, long windowMs, long limit, long align,
      CalendarUnit calendar, int days, ZoneId zone) {}

  /**
   * One counter: a sliding log is its list of entries (oldest first, pruned at every write as the
   * docs state); the other algorithms keep their list of operations, folded from a checkpoint that
   * is taken every {@link #CHECKPOINT} operations so long runs stay linear.
   */
  private static final class Counter {
    final Algorithm algorithm;
    final List<long[]> log = new ArrayList<>(); // sliding-log: {time, cost}, oldest first
    final List<Op> ops = new ArrayList<>();
    long[] base; // fixed-window {last, count} or gcra {tat}; null: empty

    Counter(Algorithm algorithm) {
      this.algorithm = algorithm;
    }
  }

  private static final int CHECKPOINT = 64;

  /**
   * What was admitted; enough to release it again: per counter its partition and the time it was
   * recorded at (its partition's time).
   */
  private record Admitted(Message message, long time, List<String> counters, List<String> partitions,
      long[] times) {}

  private Policy policy;
  private Map<String, long[]> logSpecs; // rule id -> {maxWindow, capacity} of its shared counter
  private final Map<String, Counter> counters = new HashMap<>();
  private final Map<String, String> counterRule = new HashMap<>();
  /** Every live admitted message per counter (released and reset ones removed), never pruned by retention: {time, cost}. */
  private final Map<String, List<long[]>> history = new HashMap<>();
  private final Map<String, Admitted> admitted = new HashMap<>();
  /** Per partition the latest time it was written at: no request of it is decided earlier. */
  private final Map<String, Long> partitionTimes = new HashMap<>();
  private long latest = Long.MIN_VALUE;
  /** The latest decision time seen (dry runs and refusals too): the time a release runs at (Engine.release). */
  private long seen = Long.MIN_VALUE;
  /** How far back the full history reaches: beyond every window the traffic uses (at most a day) and its steps back. */
  private static final long HISTORY_MS = 33 * 86_400_000L;

  public Oracle(Policy policy) {
    setPolicy(policy);
  }

  public Policy policy() {
    return policy;
  }

  /** A rule edit: counters keep what they counted (their identity ignores limit and window). */
  public void setPolicy(Policy next) {
    policy = Objects.requireNonNull(next);
    Map<String, long[]> specs = new HashMap<>();
    for (Rule r : next.rules()) {
      if (r.isSendWindow()) {
        continue; // a send window counts nothing
      }
      long maxWindow = 0;
      long maxLimit = 0;
      boolean shadow = false;
      for (Rule o : next.rules()) {
        if (!o.isSendWindow() && identity(o).equals(identity(r))) {
          maxWindow = Math.max(maxWindow, o.windowMs());
          maxLimit = Math.max(maxLimit, o.limit());
          shadow |= !o.enforced();
        }
      }
      specs.put(r.id(), new long[] {maxWindow, shadow ? Math.max(2 * maxLimit, maxLimit + 64) : maxLimit});
    }
    logSpecs = specs;
  }

  /** The system under test no longer remembers this decision for release: neither does the oracle. */
  public void forget(String key) {
    admitted.remove(key);
  }

  /** The verdict on one decision the system under test gave. */
  public record Verdict(Decision expected, boolean overAdmission, List<String> mismatches) {
    public boolean expectedAllowed() {
      return expected.allowed();
    }

    public boolean matches() {
      return mismatches.isEmpty();
    }
  }

  /**
   * Judges {@code actual}, the answer to {@code m} at {@code now}, and, unless {@code dryRun}, applies
   * what the oracle says the decision recorded. {@code key} names the decision for {@link #release}.
   * Sliding-counter outcomes are taken from {@code actual} after checking them against the bound.
   */
  public Verdict decide(Message m, long now, boolean dryRun, Decision actual, String key) {
    seen = Math.max(seen, now);
    List<String> mismatches = new ArrayList<>();
    List<Rule> rules = applicable(m);
    Map<String, RuleOutcome> actualById = new HashMap<>();
    if (actual != null) {
      actual.rules().forEach(o -> actualById.put(o.id(), o));
    }
    List<RuleOutcome> expected = new ArrayList<>();
    boolean boundBroken = false;
    long requested = now;
    long decisionTime = decisionTime(rules, m, requested);
    for (Rule r : rules) {
      RuleOutcome o;
      if (r.isSendWindow()) {
        expected.add(windowOutcome(r, m, zoneOf(r, m), requested, decisionTime));
        continue;
      }
      now = at(partitionKey(r, m), requested);
      if (r.algorithm() == Algorithm.SLIDING_COUNTER) {
        RuleOutcome a = actualById.get(r.id());
        if (a == null) {
          mismatches.add("rule " + r.id() + " missing from the answer");
          o = new RuleOutcome(r.id(), r.limit(), r.windowMs(), 0, r.limit(), true, r.enforced(), 0, 0);
        } else {
          String broken = slidingCounterBound(r, m, now, a);
          if (broken != null) {
            mismatches.add(broken);
            boundBroken |= a.allowed();
          }
          o = a;
        }
      } else {
        o = outcome(r, m, now, requested);
      }
      expected.add(o);
    }
    Decision want = decision(rules, expected, m, decisionTime);
    if (actual != null) {
      compare(want, actual, mismatches);
      if (!rules.isEmpty() && actual.time() != decisionTime) {
        mismatches.add("time " + actual.time() + ", oracle " + decisionTime);
      }
      if (actual.allowed()) {
        for (Rule r : rules) {
          String broken = enforces(r, m) && !r.isSendWindow() ? overLimit(r, m, at(partitionKey(r, m), requested), requested) : null;
          if (broken != null) {
            mismatches.add(broken);
            boundBroken = true;
          }
        }
      }
    }
    boolean over = actual != null && actual.allowed() && (!want.allowed() || boundBroken);
    if (!dryRun) {
      apply(m, requested, rules, expected, want.allowed(), key);
    }
    return new Verdict(want, over, mismatches);
  }

  /**
   * The time a decision at {@code requested} is made at: its first partition's (the recipient's if a
   * counter keyed by the recipient applies, else that of the first counter that applies), which never
   * runs backwards; the caller's time when no counter applies.
   */
  private long decisionTime(List<Rule> rules, Message m, long requested) {
    Rule first = null;
    for (Rule r : rules) {
      if (!r.isSendWindow() && (first == null || r.key().contains(Dimension.RECIPIENT))) {
        first = r;
        if (r.key().contains(Dimension.RECIPIENT)) {
          break;
        }
      }
    }
    return first == null ? requested : at(partitionKey(first, m), requested);
  }

  /** Releases an admitted decision; true iff the oracle knew it and had not released it yet. */
  public boolean release(String key) {
    Admitted a = admitted.remove(key);
    if (a == null) {
      return false;
    }
    for (String partition : a.partitions()) {
      // the engine releases each partition at the latest caller time; the store clamps to the partition's
      partitionTimes.put(partition, at(partition, Math.max(a.time(), seen)));
    }
    for (int k = 0; k < a.counters().size(); k++) {
      String id = a.counters().get(k);
      long eventTime = a.times()[k];
      addOp(id, Kind.RELEASE, partitionTimes.get(partitionOfCounter(a, k)), eventTime, eventTime, a.message().cost(),
          a.message());
      List<long[]> h = history.get(id);
      if (h != null) {
        for (int i = h.size() - 1; i >= 0; i--) {
          if (h.get(i)[0] == eventTime && h.get(i)[1] == a.message().cost()) {
            h.remove(i);
            break;
          }
        }
      }
    }
    return true;
  }

  /** Forgets a recipient: every counter of the recipient's partition. */
  public void reset(String tenant, String recipient) {
    String prefix = partitionOf(tenant, recipient);
    counters.keySet().removeIf(k -> k.startsWith(prefix));
    history.keySet().removeIf(k -> k.startsWith(prefix));
    partitionTimes.remove(prefix);
    // decisions that recorded there stay releasable but give nothing back (Engine.reset)
    admitted.replaceAll((k, a) -> a.partitions().contains(prefix)
        ? new Admitted(a.message(), a.time(), List.of(), List.of(), new long[0]) : a);
  }

  /** The time a request at {@code time} is decided at in {@code partition}: never before its latest write. */
  private long at(String partition, long time) {
    Long latest = partitionTimes.get(partition);
    return latest == null ? time : Math.max(time, latest);
  }

  private static String partitionOfCounter(Admitted a, int k) {
    return a.partitions().get(k);
  }

  /** The store partition a rule's counter lives in: the recipient's, or one per tenant, key and values. */
  private static String partitionKey(Rule r, Message m) {
    if (r.key().contains(Dimension.RECIPIENT)) {
      return partitionOf(m.tenant(), m.recipient());
    }
    StringBuilder sb = new StringBuilder("S").append(m.tenant().length()).append(':').append(m.tenant())
        .append(r.key()).append('|');
    for (Dimension d : r.key()) {
      String v = Dimension.CONTENT.equals(d) ? m.content() : d.valueOf(m);
      sb.append(v.length()).append(':').append(v);
    }
    return sb.toString();
  }

  // ------------------------------------------------------------------------------------------------

  private List<Rule> applicable(Message m) {
    List<Rule> out = new ArrayList<>();
    for (Rule r : policy.rules()) {
      if (policy.tenant().equals(m.tenant()) && applies(r, m)) {
        out.add(r);
      }
    }
    return out;
  }

  static boolean applies(Rule rule, Message m) {
    for (Dimension d : rule.key()) {
      if (Dimension.CONTENT.equals(d) ? m.content() == null : d.valueOf(m) == null) {
        return false;
      }
    }
    return rule.appliesTo(m);
  }

  private static String partitionOf(String tenant, String recipient) {
    return "R" + tenant.length() + ":" + tenant + recipient.length() + ":" + recipient + "|";
  }

  /** The counter a rule uses for a message: its partition, the shared identity, the key's values. */
  private static String counterId(Rule r, Message m) {
    StringBuilder sb = new StringBuilder();
    if (r.key().contains(Dimension.RECIPIENT)) {
      sb.append(partitionOf(m.tenant(), m.recipient()));
    } else {
      sb.append("S").append(m.tenant().length()).append(':').append(m.tenant()).append(r.key()).append('|');
    }
    sb.append(identity(r)).append('|');
    for (Dimension d : r.key()) {
      String v = Dimension.CONTENT.equals(d) ? m.content() : d.valueOf(m);
      sb.append(v.length()).append(':').append(v);
    }
    return sb.toString();
  }

  private static String identity(Rule r) {
    String shared = r.algorithm() + "|" + r.key() + "|" + canonical(r.match()) + "|" + canonical(r.exempt());
    return r.algorithm() == Algorithm.SLIDING_LOG ? shared : shared + "|rule=" + r.id();
  }

  private static String canonical(Condition c) {
    Map<String, List<String>> sorted = new TreeMap<>();
    c.values().forEach((d, v) -> sorted.put(d.toString(), v.stream().sorted().toList()));
    return sorted.toString();
  }

  private void addOp(String id, Kind kind, long time, long eventTime, long alignAt, long cost, Message m) {
    Counter c = counters.get(id);
    Rule r = ruleOf(id);
    if (c == null || r == null) {
      return; // forgotten by a reset, or its rule left the policy
    }
    if (c.algorithm == Algorithm.SLIDING_LOG) {
      long[] spec = logSpecs.get(r.id());
      // a record of a message that a rule of this log lets through without refusing keeps the whole window
      writeLog(c.log, kind, eventTime, cost, spec[0], relaxes(r, m) ? Long.MAX_VALUE : spec[1]);
      return;
    }
    long[] spec = spec(r, m, alignAt);
    c.ops.add(new Op(kind, time, eventTime, cost, spec[0], r.limit(), spec[1], calendarOf(r), daysOf(r),
        calendarZone(r, m)));
    if (c.ops.size() >= CHECKPOINT) {
      c.base = c.algorithm == Algorithm.FIXED_WINDOW ? fixedWindow(c) : c.algorithm == Algorithm.GCRA
          ? new long[] {gcra(c)} : null;
      c.ops.clear();
    }
  }

  /**
   * Whether rule {@code r} may refuse {@code m}, stated here apart from the engine's
   * {@code Rule.enforcedFor}: enforced, not an override, and not one of the rule's count-only messages.
   */
  private static boolean enforces(Rule r, Message m) {
    return r.mode() == dev.fcap.model.Mode.ENFORCE && !m.override() && (r.countOnly() == null || !r.countOnly().test(m));
  }

  /** Whether {@code m} is counted without being refused by an enforced rule sharing {@code r}'s counter. */
  private boolean relaxes(Rule r, Message m) {
    for (Rule o : policy.rules()) {
      if (!o.isSendWindow() && o.enforced() && !enforces(o, m) && identity(o).equals(identity(r))) {
        return true;
      }
    }
    return false;
  }

  /** Which rule of the current policy a counter belongs to (any one of a shared log's rules). */
  private Rule ruleOf(String counter) {
    String id = counterRule.get(counter);
    for (Rule r : policy.rules()) {
      if (r.id().equals(id)) {
        return r;
      }
    }
    return null;
  }

  private void apply(Message m, long now, List<Rule> rules, List<RuleOutcome> outcomes, boolean allowed, String key) {
    // the partitions in the engine's order, and the distinct counters of each
    Map<String, LinkedHashMap<String, Rule>> partitions = new LinkedHashMap<>();
    Map<String, Boolean> partitionAdmits = new HashMap<>();
    Map<String, String> partitionKeys = new HashMap<>();
    String recipientPartition = "recipient";
    partitions.put(recipientPartition, new LinkedHashMap<>());
    for (int i = 0; i < rules.size(); i++) {
      Rule r = rules.get(i);
      if (r.isSendWindow()) {
        if (enforces(r, m) && !outcomes.get(i).allowed()) {
          return; // outside an enforced window: nothing is recorded anywhere, no partition's time moves
        }
        continue;
      }
      String p = r.key().contains(Dimension.RECIPIENT) ? recipientPartition : r.key().toString();
      partitionKeys.putIfAbsent(p, partitionKey(r, m));
      String counter = counterId(r, m);
      counterRule.putIfAbsent(counter, r.id());
      counters.computeIfAbsent(counter, k -> new Counter(r.algorithm()));
      partitions.computeIfAbsent(p, k -> new LinkedHashMap<>()).putIfAbsent(counter, r);
      boolean refuses = !outcomes.get(i).allowed() && enforces(r, m);
      partitionAdmits.merge(p, !refuses, Boolean::logicalAnd);
    }
    List<String> recorded = new ArrayList<>();
    List<String> recordedPartitions = new ArrayList<>();
    List<Long> times = new ArrayList<>();

    for (Map.Entry<String, LinkedHashMap<String, Rule>> p : partitions.entrySet()) {
      if (p.getValue().isEmpty()) {
        continue;
      }
      if (!partitionAdmits.getOrDefault(p.getKey(), true)) {
        break; // this partition refused: the ones before it recorded and now give it back
      }
      String partition = partitionKeys.get(p.getKey());
      long at = at(partition, now); // each partition at its own time
      partitionTimes.put(partition, at);
      for (Map.Entry<String, Rule> c : p.getValue().entrySet()) {
        addOp(c.getKey(), Kind.RECORD, at, at, now, m.cost(), m);
        recorded.add(c.getKey());
        recordedPartitions.add(partition);
        times.add(at);
      }
    }
    if (!allowed) {
      for (int k = 0; k < recorded.size(); k++) {
        addOp(recorded.get(k), Kind.RELEASE, times.get(k), times.get(k), times.get(k), m.cost(), m);
      }
      return;
    }
    for (int k = 0; k < recorded.size(); k++) {
      String c = recorded.get(k);
      long at = times.get(k);
      latest = Math.max(latest, at);
      List<long[]> h = history.computeIfAbsent(c, x -> new ArrayList<>());
      int i = h.size();
      while (i > 0 && h.get(i - 1)[0] > at) {
        i--;
      }
      h.add(i, new long[] {at, m.cost()});
      if (h.get(0)[0] < latest - HISTORY_MS - 86_400_000L) {
        int old = 0;
        while (h.get(old)[0] < latest - HISTORY_MS) {
          old++;
        }
        h.subList(0, old).clear();
      }
    }
    admitted.put(key, new Admitted(m, now, List.copyOf(recorded), List.copyOf(recordedPartitions),
        times.stream().mapToLong(Long::longValue).toArray()));
  }

  /**
   * The decision of {@code outcomes} (one per rule of {@code rules}) made at {@code time}. Its
   * {@code sendAt}: every counter frees monotonically when nothing else is sent, so from the latest
   * instant an enforced counter that refused frees at (and not before {@code time}), the first instant
   * at which every enforced window that applies is open, each by its own zone; -1 if a counter never
   * frees or no such instant comes within {@link #HORIZON_MS}.
   */
  private Decision decision(List<Rule> rules, List<RuleOutcome> outcomes, Message m, long time) {
    List<String> blocked = new ArrayList<>();
    List<String> shadow = new ArrayList<>();
    long from = time;
    boolean never = false;
    List<SendWindow> windows = new ArrayList<>();
    List<ZoneId> zones = new ArrayList<>();
    for (int i = 0; i < outcomes.size(); i++) {
      Rule r = rules.get(i);
      RuleOutcome o = outcomes.get(i);
      if (r.isSendWindow() && enforces(r, m)) {
        windows.add(r.sendWindow());
        zones.add(zoneOf(r, m));
      }
      if (o.allowed()) {
        continue;
      }
      if (!o.enforced()) {
        shadow.add(o.id());
        continue;
      }
      blocked.add(o.id());
      if (!r.isSendWindow()) {
        never |= o.sendAt() < 0;
        from = Math.max(from, o.sendAt());
      }
    }
    boolean allowed = blocked.isEmpty();
    long sendAt = allowed ? 0 : never ? -1 : earliestOpen(windows, zones, from);
    long retry = allowed ? 0 : sendAt < 0 ? -1 : sendAt - time;
    return new Decision(allowed, "", retry, blocked, shadow, outcomes, false, time, 0, false, sendAt);
  }

  /**
   * A send window's outcome: judged at the message's own time {@code requested} (docs/algorithms.md:
   * a window reads the time the message is sent at, not a partition's later time after a clock step
   * back), open, or refused until its own next opening, never before the decision's {@code time}.
   */
  private static RuleOutcome windowOutcome(Rule r, Message m, ZoneId zone, long requested, long time) {
    boolean open = inside(r.sendWindow(), zone, requested);
    long next = open ? 0 : earliestOpen(List.of(r.sendWindow()), List.of(zone), requested);
    next = next <= 0 ? next : Math.max(next, time);
    long retry = open ? 0 : next < 0 ? -1 : next - time;
    return new RuleOutcome(r.id(), r.limit(), r.windowMs(), 0, Math.max(0, r.limit()), open, enforces(r, m), retry,
        next);
  }

  /** The zone whose wall clock a send window or calendar reads for {@code m}. */
  private ZoneId zoneOf(Rule r, Message m) {
    if (r.isSendWindow()) {
      return r.sendWindow().recipientZone() ? policy.zoneOf(m) : r.sendWindow().zone();
    }
    return calendarZone(r, m);
  }

  /**
   * The calendar a fixed-window rule's windows follow: its own, or for a window of several whole days
   * in a zone, runs of {@link #daysOf} local days (a {@code DAY} calendar); null: windows of its length
   * from the epoch.
   */
  static CalendarUnit calendarOf(Rule r) {
    return r.calendar() != null ? r.calendar() : daysOf(r) > 1 ? CalendarUnit.DAY : null;
  }

  /** The local days one period of {@link #calendarOf} spans: a zoned window's whole days, else 1. */
  static int daysOf(Rule r) {
    boolean run = r.calendar() == null && r.zone() != null && r.algorithm() == Algorithm.FIXED_WINDOW
        && r.windowMs() % DAY_MS == 0;
    return run ? (int) (r.windowMs() / DAY_MS) : 1;
  }

  /** A calendar rule's zone for {@code m} (its own, the recipient's, or UTC); null for a rule without a calendar. */
  private ZoneId calendarZone(Rule r, Message m) {
    if (calendarOf(r) == null) {
      return null;
    }
    if (r.recipientZone()) {
      return policy.zoneOf(m);
    }
    return r.zone() != null ? r.zone() : ZoneOffset.UTC;
  }

  // ------------------------------------------------------------------------------------------------
  // Wall clocks, read with java.time and nothing else.

  private static final long MINUTE_MS = 60_000L;
  private static final long DAY_MS = 86_400_000L;
  /** How far past the counters' instant an instant with every window open is looked for. */
  static final long HORIZON_MS = 800 * DAY_MS;

  /**
   * The period [start, end) of {@code unit} in {@code zone} holding {@code t}: from the first instant of
   * the period's first local date (java.time's start of day: after the gap when midnight is skipped)
   * to the next period's.
   */
  static long[] period(CalendarUnit unit, ZoneId zone, long t) {
    return period(unit, 1, zone, t);
  }

  /** {@link #period(CalendarUnit, ZoneId, long)}, a {@code DAY} period spanning {@code days} local dates from a multiple of them. */
  static long[] period(CalendarUnit unit, int days, ZoneId zone, long t) {
    LocalDate date = LocalDateTime.ofInstant(Instant.ofEpochMilli(t), zone).toLocalDate();
    LocalDate first = switch (unit) {
      case DAY -> LocalDate.ofEpochDay(Math.floorDiv(date.toEpochDay(), days) * days);
      case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
      case MONTH -> date.withDayOfMonth(1);
    };
    LocalDate next = unit == CalendarUnit.DAY ? first.plusDays(days) : first.plus(1, unit.temporalUnit());
    return new long[] {first.atStartOfDay(zone).toInstant().toEpochMilli(),
        next.atStartOfDay(zone).toInstant().toEpochMilli()};
  }

  /** Whether {@code w} holds instant {@code t} by the wall clock of {@code zone}: the definition, verbatim. */
  static boolean inside(SendWindow w, ZoneId zone, long t) {
    LocalDateTime local = LocalDateTime.ofInstant(Instant.ofEpochMilli(t), zone);
    return holds(w, local.toLocalDate().toEpochDay(), local.toLocalTime().toSecondOfDay() / 60);
  }

  /**
   * Whether {@code w} holds the local minute {@code minute} of local date {@code day}: inside any
   * interval, a midnight-spanning one tested on the date it opened.
   */
  private static boolean holds(SendWindow w, long day, int minute) {
    for (SendWindow.Interval i : w.allow()) {
      int from = i.from().toSecondOfDay() / 60;
      int to = i.to().toSecondOfDay() / 60;
      if (from < to) {
        if (minute >= from && minute < to && opensOn(w, i, day)) {
          return true;
        }
      } else if (minute >= from && opensOn(w, i, day) || minute < to && opensOn(w, i, day - 1)) {
        return true;
      }
    }
    return false;
  }

  private static boolean opensOn(SendWindow w, SendWindow.Interval i, long day) {
    LocalDate d = LocalDate.ofEpochDay(day);
    return i.days().contains(d.getDayOfWeek()) && !w.closed().contains(d);
  }

  /**
   * The earliest instant at or after {@code from} at which every window is open by its zone's wall
   * clock; -1 if none within {@link #HORIZON_MS}. Naive: {@code from} itself, then whole minutes
   * (offsets and transitions are whole minutes and bounds are {@code HH:MM}, so membership only
   * changes on a minute), passing over the minutes that a window is shut for as a whole (see {@link
   * #shutUntil}): a scan of every minute to the horizon took seconds for windows that never meet.
   */
  static long earliestOpen(List<SendWindow> windows, List<ZoneId> zones, long from) {
    if (windows.isEmpty() || from < 0) {
      return from;
    }
    WallClock[] clocks = new WallClock[zones.size()];
    for (int i = 0; i < clocks.length; i++) {
      clocks[i] = new WallClock(zones.get(i));
    }
    long limit = from + HORIZON_MS;
    for (long t = from; t <= limit; ) {
      long shut = t; // t while every window holds it; else the latest instant a shut one stays shut until
      for (int i = 0; i < clocks.length; i++) {
        shut = Math.max(shut, shutUntil(windows.get(i), clocks[i], t));
      }
      if (shut == t) {
        return t;
      }
      long nextMinute = Math.floorDiv(t, MINUTE_MS) * MINUTE_MS + MINUTE_MS;
      t = Math.max(nextMinute, -Math.floorDiv(-shut, MINUTE_MS) * MINUTE_MS); // the first whole minute from shut
    }
    return -1;
  }

  /**
   * {@code t} if {@code w} holds {@code t}; else an instant after it up to which {@code w} stays
   * shut: the next of its bounds' minutes or local midnight on the wall clock (between them {@link
   * #holds} reads the same date and the same side of every bound), or the zone's next offset change,
   * if sooner.
   */
  private static long shutUntil(SendWindow w, WallClock clock, long t) {
    long local = clock.localMs(t);
    long day = Math.floorDiv(local, DAY_MS);
    int minute = (int) (Math.floorMod(local, DAY_MS) / MINUTE_MS);
    if (holds(w, day, minute)) {
      return t;
    }
    int next = 24 * 60;
    for (SendWindow.Interval i : w.allow()) {
      for (int bound : new int[] {i.from().toSecondOfDay() / 60, i.to().toSecondOfDay() / 60}) {
        if (bound > minute && bound < next) {
          next = bound;
        }
      }
    }
    return Math.min(t + (day * DAY_MS + next * MINUTE_MS - local), clock.validUntil);
  }

  /**
   * A zone's local time as epoch milliseconds of the wall clock, for a scan forward in time: java.time's
   * offset at an instant, reused until the zone's next transition.
   */
  private static final class WallClock {
    private final ZoneRules rules;
    private long validFrom = Long.MAX_VALUE;
    private long validUntil = Long.MIN_VALUE;
    private long offsetMs;

    WallClock(ZoneId zone) {
      rules = zone.getRules();
    }

    long localMs(long t) {
      if (t < validFrom || t >= validUntil) {
        Instant at = Instant.ofEpochMilli(t);
        offsetMs = rules.getOffset(at).getTotalSeconds() * 1000L;
        ZoneOffsetTransition next = rules.nextTransition(at);
        validFrom = t;
        validUntil = next == null ? Long.MAX_VALUE : next.getInstant().toEpochMilli();
      }
      return t + offsetMs;
    }
  }

  private static void compare(Decision want, Decision actual, List<String> mismatches) {
    if (want.allowed() != actual.allowed()) {
      mismatches.add("allowed " + actual.allowed() + ", oracle " + want.allowed());
    }
    if (!want.blockedBy().equals(actual.blockedBy())) {
      mismatches.add("blockedBy " + actual.blockedBy() + ", oracle " + want.blockedBy());
    }
    if (!want.shadowBlockedBy().equals(actual.shadowBlockedBy())) {
      mismatches.add("shadowBlockedBy " + actual.shadowBlockedBy() + ", oracle " + want.shadowBlockedBy());
    }
    if (want.retryAfterMs() != actual.retryAfterMs()) {
      mismatches.add("retryAfterMs " + actual.retryAfterMs() + ", oracle " + want.retryAfterMs());
    }
    if (want.sendAt() != actual.sendAt()) {
      mismatches.add("sendAt " + actual.sendAt() + ", oracle " + want.sendAt());
    }
    if (want.rules().size() != actual.rules().size()) {
      mismatches.add("rules " + actual.rules() + ", oracle " + want.rules());
      return;
    }
    for (int i = 0; i < want.rules().size(); i++) {
      if (!want.rules().get(i).equals(actual.rules().get(i))) {
        mismatches.add(actual.rules().get(i) + ", oracle " + want.rules().get(i));
      }
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Per algorithm, from the counter's list.

  /** The outcome at {@code now}, the partition's time, of a request made at {@code alignAt}. */
  private RuleOutcome outcome(Rule r, Message m, long now, long alignAt) {
    Counter counter = counters.get(counterId(r, m));
    if (counter == null) {
      counter = new Counter(r.algorithm());
    }
    long cost = m.cost();
    long bound = r.boundFor(m.priority()); // the limit less the headroom the message's priority leaves
    long used;
    long retryAt;
    switch (r.algorithm()) {
      case SLIDING_LOG -> {
        List<long[]> in = counter.log.stream().filter(e -> e[0] > now - r.windowMs()).toList();
        used = in.stream().mapToLong(e -> e[1]).sum();
        if (used + cost <= bound) {
          retryAt = now;
        } else if (cost > bound) {
          retryAt = NEVER;
        } else {
          retryAt = NEVER;
          long remaining = used;
          for (long[] e : in) {
            remaining -= e[1];
            if (remaining + cost <= bound) {
              retryAt = e[0] + r.windowMs();
              break;
            }
          }
        }
      }
      case FIXED_WINDOW -> {
        long[] state = fixedWindow(counter); // {last, count, expiry} or null
        long[] spec = spec(r, m, alignAt);
        long window = spec[0];
        long start = windowStart(now, window, spec[1]);
        used = state != null && state[2] > now && state[0] >= start ? state[1] : 0;
        retryAt = used + cost <= bound ? now
            : cost > bound ? NEVER : windowStart(state[0], window, spec[1]) + window;
      }
      case GCRA -> {
        long t = interval(r.windowMs(), r.limit());
        long nowUs = now * 1000;
        long tat = Math.max(gcra(counter), nowUs);
        used = Math.min(r.limit(), ceilDiv(tat - nowUs, t));
        retryAt = tat - nowUs + cost * t <= bound * t ? now
            : cost > bound ? NEVER : ceilDiv(tat - (bound - cost) * t, 1000);
      }
      default -> throw new IllegalStateException(r.algorithm().toString());
    }
    boolean allowed = retryAt == now;
    long retry = allowed ? 0 : retryAt == NEVER ? -1 : retryAt - now;
    return new RuleOutcome(r.id(), r.limit(), r.windowMs(), used, Math.max(0, r.limit() - used), allowed,
        enforces(r, m), retry, allowed ? 0 : retryAt, bound);
  }

  /** One write to a log; a record then keeps the documented retention: the longest window, the newest capacity units. */
  private static void writeLog(List<long[]> log, Kind kind, long time, long cost, long maxWindow, long capacity) {
    if (kind == Kind.RECORD) {
      int at = log.size();
      while (at > 0 && log.get(at - 1)[0] > time) {
        at--; // a clock step back: the log stays ordered by time
      }
      log.add(at, new long[] {time, cost});
    } else {
      int found = -1;
      for (int i = log.size() - 1; i >= 0 && found < 0; i--) {
        if (log.get(i)[0] == time && log.get(i)[1] == cost) {
          found = i;
        }
      }
      // a large log moves at most LargeLog.MAX_RELEASE_MOVES entries: beyond, nothing comes back
      boolean large = capacity > dev.fcap.algorithm.LargeLog.LARGE_FROM;
      if (found >= 0 && !(large && log.size() - 1 - found > dev.fcap.algorithm.LargeLog.MAX_RELEASE_MOVES)) {
        log.remove(found);
      }
      return; // a release drops the released entry only: pruning belongs to record
    }
    long newer = 0;
    int keepFrom = log.size();
    while (keepFrom > 0) {
      long[] e = log.get(keepFrom - 1);
      if (e[0] <= time - maxWindow || newer >= capacity) {
        break;
      }
      newer += e[1];
      keepFrom--;
    }
    log.subList(0, keepFrom).clear();
  }

  private static long windowStart(long t, long window, long align) {
    return Math.floorDiv(t - align, window) * window + align;
  }

  /**
   * The window {start, end} of {@code op}'s counter that holds {@code t}: from the end of the op's own
   * period on, a calendar rule's real periods (a day of 23 or 25 hours, a month of its length), by
   * java.time; else, and before it, windows of the op's length from its alignment.
   */
  private static long[] windowOf(Op op, long t) {
    if (op.calendar() == null || t < op.align() + op.windowMs()) {
      long start = windowStart(t, op.windowMs(), op.align());
      return new long[] {start, start + op.windowMs()};
    }
    return period(op.calendar(), op.days(), op.zone(), t);
  }

  /**
   * {last, count, expiry} of the window holding the newest recorded message, or null. The expiry is
   * the end of that window by the spec of the counter's latest write, in whole seconds rounded up, as
   * the store keeps it: a calendar counter written in one zone's period is gone once that period
   * ends, whatever period a later message's zone puts it in.
   */
  private static long[] fixedWindow(Counter c) {
    long[] s = c.base;
    for (Op op : c.ops) {
      if (s != null && s[2] <= op.time()) {
        s = null; // expired by the spec it was last written with
      }
      long start = windowOf(op, op.time())[0];
      if (op.kind() == Kind.RECORD) {
        s = s != null && s[0] >= start ? new long[] {Math.max(op.time(), s[0]), s[1] + op.cost(), 0}
            : new long[] {op.time(), op.cost(), 0};
      } else if (s != null && s[0] >= start && op.eventTime() >= windowOf(op, s[0])[0]) {
        // a message gives back a unit of the count only if it lies in the count's window, while that
        // window is live at the release's time
        s = s[1] - op.cost() <= 0 ? null : new long[] {s[0], s[1] - op.cost(), 0};
      } else if (s != null) {
        s = new long[] {s[0], s[1], 0}; // rewritten as it is, with the release's spec
      }
      if (s != null) {
        s[2] = ceilDiv(windowOf(op, s[0])[1], 1000) * 1000;
        if (s[2] <= op.time()) {
          s = null;
        }
      }
    }
    return s;
  }

  /**
   * The fixed window {windowMs, align} a rule counts {@code m} in, for a request at {@code alignAt}: a
   * calendar rule's is the period holding {@code alignAt} in its zone (the message's, for a
   * recipient-zone rule), as a window of the period's length aligned to its start; any other's is
   * its window, aligned to the epoch (or to midnight of its zone).
   */
  private long[] spec(Rule r, Message m, long alignAt) {
    if (calendarOf(r) != null) {
      long[] p = period(calendarOf(r), daysOf(r), calendarZone(r, m), alignAt);
      return new long[] {p[1] - p[0], p[0]};
    }
    return new long[] {r.windowMs(), 0};
  }

  private static long interval(long windowMs, long limit) {
    return ceilDiv(windowMs * 1000, limit);
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }

  /** The theoretical arrival time in microseconds after the counter's list (Long.MIN_VALUE if empty). */
  private static long gcra(Counter c) {
    long tat = c.base == null ? Long.MIN_VALUE : c.base[0];
    for (Op op : c.ops) {
      long t = interval(op.windowMs(), op.limit());
      long nowUs = op.time() * 1000;
      if (op.kind() == Kind.RECORD) {
        tat = Math.max(tat, nowUs) + op.cost() * t;
      } else if (tat != Long.MIN_VALUE) {
        // only what is left of the event's cell: a cell that has drained is never given back
        long held = Math.min(op.cost() * t, op.eventTime() * 1000 + op.cost() * t - nowUs);
        if (held > 0) {
          long next = Math.max(tat, nowUs) - held;
          tat = next <= nowUs ? Long.MIN_VALUE : next;
        }
      }
    }
    return tat;
  }

  /**
   * What an admission at {@code now} would put over the rule's limit, from the full history (not the
   * documented retention), or null: for the sliding algorithms, every window of length W that holds
   * {@code now}; for the fixed window, the calendar window holding {@code now}. GCRA is a meter, not a
   * window count, and is held to its fold alone.
   */
  private String overLimit(Rule r, Message m, long now, long alignAt) {
    List<long[]> h = history.getOrDefault(counterId(r, m), List.of());
    long w = r.windowMs();
    long bound = r.boundFor(m.priority()); // an admitted message may bring the count to its bound, no further
    switch (r.algorithm()) {
      case SLIDING_LOG, SLIDING_COUNTER -> {
        // the windows that hold `now`: ending at now, and at every later message within W
        List<Long> ends = new ArrayList<>(List.of(now));
        for (int i = h.size() - 1; i >= 0 && h.get(i)[0] > now; i--) {
          if (h.get(i)[0] < now + w) {
            ends.add(h.get(i)[0]);
          }
        }
        for (long end : ends) {
          long sum = m.cost() + sum(h, end - w, end);
          if (sum > bound) {
            return "over: " + r.algorithm() + " " + r.id() + " admitted " + sum + " in the window (" + (end - w) + ", "
                + end + "] (bound " + bound + ")";
          }
        }
      }
      case FIXED_WINDOW -> {
        if (r.recipientZone()) {
          // a recipient's zone may change between messages, and each decision reads its own: no one
          // calendar holds the history, so the fold alone judges it
          return null;
        }
        long[] spec = spec(r, m, alignAt);
        w = spec[0];
        long start = windowStart(now, w, spec[1]);
        long sum = m.cost() + sum(h, start - 1, start + w - 1);
        if (sum > bound) {
          return "over: fixed-window " + r.id() + " admitted " + sum + " in the window [" + start + ", " + (start + w)
              + ") (bound " + bound + ")";
        }
      }
      default -> { }
    }
    return null;
  }

  /** The cost in (from, to] of a history ordered by time. */
  private static long sum(List<long[]> h, long from, long to) {
    long sum = 0;
    for (int i = h.size() - 1; i >= 0 && h.get(i)[0] > from; i--) {
      if (h.get(i)[0] <= to) {
        sum += h.get(i)[1];
      }
    }
    return sum;
  }

  /** Null if the engine's sliding-counter refusal keeps the stated bound, else what broke. */
  private String slidingCounterBound(Rule r, Message m, long now, RuleOutcome a) {
    List<long[]> h = history.getOrDefault(counterId(r, m), List.of());
    long longer = r.windowMs() + ceilDiv(r.windowMs(), r.precision()) - 1;
    long inLonger = sum(h, now - longer, Long.MAX_VALUE);
    if (!a.allowed() && inLonger + m.cost() <= r.boundFor(m.priority())) {
      return "sliding-counter " + r.id() + " refused with " + inLonger + " in W + w - 1 (bound "
          + r.boundFor(m.priority()) + ")";
    }
    return null;
  }

}
