package dev.fcap.engine;

import dev.fcap.algorithm.PartitionStep;
import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Condition;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Priority;
import dev.fcap.model.Rule;
import dev.fcap.policy.PolicyError;
import dev.fcap.policy.PolicyException;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A policy made ready to decide fast.
 *
 * <p><b>Counter groups.</b> Sliding-log rules with the same key, match and exempt always apply
 * together, so they share one log (one counter); every other rule gets a counter of its own. A
 * group's id hashes its identity (algorithm, key, selection, and the rule id for the non-log
 * algorithms) but never its limit or window: editing a limit or a window keeps the counts.
 *
 * <p><b>Selection.</b> Which rules apply to a message is answered with bitsets, not by testing every
 * rule: per selectable dimension, the rules that accept any value and, per value, the rules that list
 * it; the message's values pick one bitset per dimension and their intersection is the answer.
 * Exemptions and the presence of key values work the same way.
 *
 * <p><b>Plans.</b> Each distinct set of applicable rules maps to a cached {@link Plan}: which
 * partitions to touch, which counters in each, and where each rule's result lands.
 */
final class CompiledPolicy {
  final Policy policy;
  /** How long a message id is remembered: the longest window of the policy, at most {@link #MAX_HORIZON_MS}. */
  final long messageHorizonMs;
  static final long MAX_HORIZON_MS = 7L * 24 * 3600 * 1000;
  /** The tenant's UTF-8 bytes, encoded once for every partition key of this policy. */
  final byte[] tenantUtf8;
  final Rule[] rules;
  /** Each rule's id as a list of it alone: a decision refused by one rule lists it without a new list. */
  private final List<List<String>> ruleIdsAlone;
  /** Whether a rule names {@code countOnly} messages: only then (or for an override) a message may relax a check. */
  final boolean hasCountOnly;
  final Group[] groups;
  /** Per rule, the schedule of a send-window rule; null for a counting rule. */
  final WindowSchedule[] schedules;
  private final int[] ruleGroup;
  private final int[] ruleCheck;
  private final Map<Long, Group> groupsById = new HashMap<>();
  private final Selector selector;
  private final ConcurrentHashMap<Bits, Plan> plans = new ConcurrentHashMap<>();
  /** For policies of at most {@link #SMALL} rules, plans indexed by the applicable-rule mask: no allocation per decision. */
  private final Plan[] smallPlans;
  private static final int SMALL = 10;

  /** The counter shared by one or more rules. */
  static final class Group {
    final long id;
    final List<Dimension> key;
    final boolean recipientKeyed;
    final boolean contentKeyed;
    /** The key has no dimension but recipient and content, so requests need no value lookups. */
    final boolean plainKey;
    final CounterSpec spec;
    /** Per {@link Priority} (by ordinal), the spec a message of that class reads: {@link #spec} with its bounds. */
    private final CounterSpec[] specs;
    final ZoneId zone;
    /**
     * The calendar period its fixed window follows (a local day, ISO week or month, in {@link #zone}
     * or with {@link #recipientZone} in the message's zone); null: fixed-length windows, aligned as
     * {@link #alignMs} says. A UTC day needs no calendar: its windows are whole multiples of a day.
     */
    final CalendarUnit calendar;
    /**
     * The local days one period of a {@code DAY} calendar spans: 1, or for a fixed window of several
     * whole days in a zone, its days (windows of 48 hours aligned to local midnight move an hour when
     * the offset changes; runs of local days do not, so a message booked past the change counts in
     * the run that holds its instant, as a later decision there reads it).
     */
    final int calendarDays;
    final boolean recipientZone;
    /**
     * Per run of periods (the ends {@link LocalCalendar#periodEnds} gives: days of 23, 24 or 25 hours,
     * months of 28 to 31 days) and priority, its spec: built once.
     */
    private final ConcurrentHashMap<PeriodsKey, CounterSpec> periodSpecs;
    /**
     * Per priority, the spec returned last: a period's ends are one array, so most decisions read it
     * without a map lookup. Racy slots of immutable specs: at worst a lookup.
     */
    private final CounterSpec[] lastPeriodSpecs;
    final int[] rules;
    /**
     * The request for this counter when it is the same for every message, else null: its key is the
     * group id alone (a shared partition's counter, or a recipient partition's keyed by the recipient
     * only), no time zone moves its windows and no headroom moves its bounds. Requests are immutable,
     * so every decision reuses it.
     */
    final CounterRequest fixedRequest;

    Group(long id, List<Dimension> key, CounterSpec spec, CounterSpec[] specs, ZoneId zone, CalendarUnit calendar,
        boolean recipientZone, int[] rules) {
      this.id = id;
      this.key = key;
      this.recipientKeyed = key.contains(Dimension.RECIPIENT);
      this.contentKeyed = key.contains(Dimension.CONTENT);
      this.plainKey = key.stream().allMatch(d -> d.kind() == Dimension.Kind.RECIPIENT || d.kind() == Dimension.Kind.CONTENT);
      this.spec = spec;
      this.specs = specs;
      this.zone = zone;
      long window = spec.windowMs(0);
      boolean daysInZone = calendar == null && zone != null && spec.algorithm() == Algorithm.FIXED_WINDOW
          && window % ZoneOffsets.MS_PER_DAY == 0;
      this.calendar = daysInZone ? CalendarUnit.DAY
          : calendar != null && (zone != null || recipientZone || calendar != CalendarUnit.DAY) ? calendar : null;
      this.calendarDays = daysInZone ? Math.toIntExact(window / ZoneOffsets.MS_PER_DAY) : 1;
      this.recipientZone = recipientZone;
      this.periodSpecs = this.calendar == null ? null : new ConcurrentHashMap<>();
      this.lastPeriodSpecs = this.calendar == null ? null : new CounterSpec[specs.length];
      this.rules = rules;
      boolean idOnlyKey = !recipientKeyed || (plainKey && !contentKeyed);
      boolean sameBounds = java.util.Arrays.stream(specs).allMatch(s -> s == spec);
      this.fixedRequest = idOnlyKey && zone == null && this.calendar == null && sameBounds
          ? new CounterRequest(Keys.counterKey(id, key, null, null, false), spec, 0) : null;
    }

    /** The zone whose calendar this group's windows follow for a message in {@code messageZone}. */
    ZoneId calendarZone(ZoneId messageZone) {
      return recipientZone ? messageZone : zone != null ? zone : java.time.ZoneOffset.UTC;
    }

    /** {@link #periodSpec(long, ZoneId, Priority)} at the limits themselves (no headroom): for inspection and releases. */
    CounterSpec periodSpec(long at, ZoneId zone) {
      return periodSpec(at, zone, Priority.CRITICAL);
    }

    /** The spec a message of {@code priority} reads (a calendar group's: {@link #periodSpec}). */
    CounterSpec spec(Priority priority) {
      return specs[priority.ordinal()];
    }

    /**
     * The spec of a calendar group for the period that holds {@code at}, for a message of
     * {@code priority}: its window is the period's length and it carries the ends of the periods
     * after it, so that with the period's start as alignment the fixed window is exactly the period
     * and a booking lands in the period that holds its instant.
     */
    CounterSpec periodSpec(long at, ZoneId zone, Priority priority) {
      long[] ends = LocalCalendar.periodEnds(calendar, calendarDays, at, zone);
      int p = priority.ordinal();
      CounterSpec last = lastPeriodSpecs[p];
      if (last != null && last.hasPeriods(ends)) {
        return last;
      }
      last = periodSpecs.computeIfAbsent(new PeriodsKey(ends, p), k -> specs[p].withPeriods(ends));
      lastPeriodSpecs[p] = last;
      return last;
    }

    /** A run of periods' ends and a priority, compared by content. */
    private record PeriodsKey(long[] ends, int priority) {
      @Override
      public boolean equals(Object o) {
        return o instanceof PeriodsKey k && k.priority == priority && java.util.Arrays.equals(k.ends, ends);
      }

      @Override
      public int hashCode() {
        return java.util.Arrays.hashCode(ends) * 31 + priority;
      }
    }

    /** The alignment of a calendar group for the period that holds {@code at}: its start. */
    long periodAlign(long at, ZoneId zone) {
      return LocalCalendar.periodStart(calendar, calendarDays, at, zone);
    }

    /**
     * Where windows of fixed length start: the epoch, or with a zone (a rule built in code whose
     * window is not whole days: the parser allows a zone on those alone, which become calendars) the
     * zone's midnight by its offset now.
     */
    long alignMs(long now) {
      if (zone == null) {
        return 0;
      }
      int offsetSeconds = zone.getRules().getOffset(java.time.Instant.ofEpochMilli(now)).getTotalSeconds();
      return -offsetSeconds * 1000L;
    }
  }

  /**
   * Why a message with {@code plan} cannot be booked for later, or null if it can: a counter must be
   * able to count a message ahead of the present (over several partitions, {@link PartitionChain}
   * books them at one instant): a sliding log keeps each message's own time, a fixed window a count per window, of
   * fixed length or a local calendar's periods, whose ends the request carries (a sliding counter and
   * GCRA keep totals of the present), and a log must be small enough for a booking's sweeps
   * ({@link PartitionStep#bookable}).
   */
  String whyNotDeferrable(Plan plan, Priority priority) {
    for (Partition partition : plan.partitions) {
      for (Group g : partition.groups) {
        String rule = "rule '" + rule(g.rules[0]).id() + "'";
        CounterSpec spec = g.spec(priority);
        boolean fixed = spec.algorithm() == Algorithm.FIXED_WINDOW;
        if (spec.algorithm() != Algorithm.SLIDING_LOG && !fixed) {
          return rule + " uses " + spec.algorithm().id() + ": a message is deferred only under sliding-log rules "
              + "and fixed windows";
        }
        if (!PartitionStep.bookable(spec)) {
          return rule + " keeps more than " + PartitionStep.MAX_BOOKABLE_CAPACITY
              + " messages: a message is deferred only under limits of at most " + PartitionStep.MAX_BOOKABLE_CAPACITY;
        }
      }
    }
    return null;
  }

  /** The partitions and counters one set of applicable rules touches. */
  static final class Plan {
    /** The counting rules that apply, in policy order; their results are located by the next two. */
    final int[] rules;
    final Partition[] partitions;
    final int[] rulePartition;
    final int[] ruleOffset;
    /** The send-window rules that apply, in policy order: judged by the engine, never stored. */
    final int[] windows;
    /** The counting rules themselves, in the order of {@link #rules}: what a decision's outcomes are of. */
    final List<Rule> counted;

    Plan(int[] rules, Partition[] partitions, int[] rulePartition, int[] ruleOffset, int[] windows, List<Rule> counted) {
      this.rules = rules;
      this.counted = counted;
      this.partitions = partitions;
      this.rulePartition = rulePartition;
      this.ruleOffset = ruleOffset;
      this.windows = windows;
    }

    /** Whether a rule keyed by the recipient applies: the message's decision reads its recipient's partition. */
    boolean keyedByRecipient() {
      for (Partition p : partitions) {
        if (p.recipient) {
          return true;
        }
      }
      return false;
    }
  }

  /** One partition of a plan: the recipient's, or one shared by the values of {@link #dims}. */
  static final class Partition {
    final boolean recipient;
    final List<Dimension> dims;
    final Group[] groups;
    /** Whether a group counts calendar periods of the message's zone: a release must know that zone. */
    final boolean inMessageZone;

    Partition(boolean recipient, List<Dimension> dims, Group[] groups) {
      this.recipient = recipient;
      this.dims = dims;
      this.groups = groups;
      this.inMessageZone = java.util.Arrays.stream(groups).anyMatch(g -> g.calendar != null && g.recipientZone);
    }
  }

  CompiledPolicy(Policy policy) {
    this.policy = policy;
    this.messageHorizonMs = Math.max(1, Math.min(MAX_HORIZON_MS,
        policy.rules().stream().mapToLong(dev.fcap.model.Rule::windowMs).max().orElse(1)));
    this.tenantUtf8 = policy.tenant().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    this.rules = policy.rules().toArray(Rule[]::new);
    this.ruleIdsAlone = policy.rules().stream().map(r -> List.of(r.id())).toList();
    this.hasCountOnly = policy.rules().stream().anyMatch(r -> r.countOnly() != null);
    this.ruleGroup = new int[rules.length];
    this.ruleCheck = new int[rules.length];
    this.schedules = new WindowSchedule[rules.length];
    Map<String, List<Integer>> byIdentity = new LinkedHashMap<>();
    for (int i = 0; i < rules.length; i++) {
      if (rules[i].isSendWindow()) {
        schedules[i] = new WindowSchedule(rules[i].sendWindow());
        ruleGroup[i] = -1;
      } else {
        byIdentity.computeIfAbsent(identity(rules[i]), k -> new ArrayList<>()).add(i);
      }
    }
    List<Group> built = new ArrayList<>();
    for (Map.Entry<String, List<Integer>> e : byIdentity.entrySet()) {
      int[] members = e.getValue().stream().mapToInt(Integer::intValue).toArray();
      Group g = group(e.getKey(), members);
      if (groupsById.putIfAbsent(g.id, g) != null) {
        throw new PolicyException(List.of(new PolicyError(policy.tenant(), rules[members[0]].id(), "id",
            "counter identity collides with another rule; rename the rule")));
      }
      for (int c = 0; c < members.length; c++) {
        ruleGroup[members[c]] = built.size();
        ruleCheck[members[c]] = c;
      }
      built.add(g);
    }
    this.groups = built.toArray(Group[]::new);
    this.selector = new Selector(rules);
    this.smallPlans = rules.length <= SMALL ? new Plan[1 << rules.length] : null;
  }

  private Group group(String identity, int[] members) {
    long[] limits = new long[members.length];
    long[] windows = new long[members.length];
    boolean[] enforced = new boolean[members.length];
    for (int c = 0; c < members.length; c++) {
      Rule r = rules[members[c]];
      limits[c] = r.limit();
      windows[c] = r.windowMs();
      enforced[c] = r.enforced();
    }
    Rule first = rules[members[0]];
    CounterSpec spec = new CounterSpec(first.algorithm(), limits, windows, enforced, first.precision());
    CounterSpec[] specs = new CounterSpec[Priority.values().length];
    for (Priority p : Priority.values()) {
      long[] bounds = new long[members.length];
      boolean headroom = false;
      for (int c = 0; c < members.length; c++) {
        bounds[c] = rules[members[c]].boundFor(p);
        headroom |= bounds[c] != limits[c];
      }
      specs[p.ordinal()] = headroom ? spec.withBounds(bounds) : spec;
    }
    byte[] fp = Fingerprint.of(identity.getBytes(StandardCharsets.UTF_8), 0);
    long id = 0;
    for (int i = 0; i < 8; i++) {
      id = (id << 8) | (fp[i] & 0xffL);
    }
    return new Group(id, first.key(), spec, specs, first.zone(), first.calendar(), first.recipientZone(), members);
  }

  /** What makes two rules share a counter; never the limit or the window. */
  private static String identity(Rule r) {
    String shared = r.algorithm().id() + "|" + r.key() + "|" + canonical(r.match()) + "|" + canonical(r.exempt())
        + (r.recipientZone() ? "|zone=recipient" : "");
    return r.algorithm() == Algorithm.SLIDING_LOG ? shared : shared + "|rule=" + r.id();
  }

  private static String canonical(Condition c) {
    Map<String, List<String>> sorted = new TreeMap<>();
    c.values().forEach((d, v) -> sorted.put(d.toString(), v.stream().sorted().toList()));
    return sorted.toString();
  }

  Group groupById(long id) {
    return groupsById.get(id);
  }

  Rule rule(int index) {
    return rules[index];
  }

  /** The rule's id as a list of it alone. */
  List<String> ruleIdAlone(int index) {
    return ruleIdsAlone.get(index);
  }

  int checkOf(int rule) {
    return ruleCheck[rule];
  }

  int groupOf(int rule) {
    return ruleGroup[rule];
  }

  /** The plan for the rules that apply to {@code m}. */
  Plan plan(Message m) {
    if (smallPlans != null) {
      int mask = (int) selector.applicableWord(m);
      Plan plan = smallPlans[mask];
      if (plan == null) {
        Bits bits = new Bits(rules.length);
        bits.words[0] = mask;
        plan = plans.computeIfAbsent(bits, this::buildPlan);
        smallPlans[mask] = plan; // a benign race: every thread stores the same immutable plan
      }
      return plan;
    }
    Bits applicable = selector.applicable(m);
    Plan plan = plans.get(applicable);
    if (plan == null) {
      plan = plans.computeIfAbsent(applicable, this::buildPlan);
    }
    return plan;
  }

  private Plan buildPlan(Bits applicable) {
    int[] ruleIdx = applicable.stream().filter(r -> schedules[r] == null).toArray();
    int[] windowIdx = applicable.stream().filter(r -> schedules[r] != null).toArray();
    List<Group> recipientGroups = new ArrayList<>();
    Map<List<Dimension>, List<Group>> shared = new LinkedHashMap<>();
    boolean[] seen = new boolean[groups.length];
    for (int r : ruleIdx) {
      int g = ruleGroup[r];
      if (seen[g]) {
        continue;
      }
      seen[g] = true;
      Group group = groups[g];
      if (group.recipientKeyed) {
        recipientGroups.add(group);
      } else {
        shared.computeIfAbsent(group.key, k -> new ArrayList<>()).add(group);
      }
    }
    List<Partition> partitions = new ArrayList<>();
    if (!recipientGroups.isEmpty()) {
      partitions.add(new Partition(true, List.of(Dimension.RECIPIENT), recipientGroups.toArray(Group[]::new)));
    }
    shared.forEach((dims, gs) -> partitions.add(new Partition(false, dims, gs.toArray(Group[]::new))));
    int[] rulePartition = new int[ruleIdx.length];
    int[] ruleOffset = new int[ruleIdx.length];
    for (int i = 0; i < ruleIdx.length; i++) {
      Group target = groups[ruleGroup[ruleIdx[i]]];
      for (int p = 0; p < partitions.size(); p++) {
        int offset = 0;
        for (Group g : partitions.get(p).groups) {
          if (g == target) {
            rulePartition[i] = p;
            ruleOffset[i] = offset + ruleCheck[ruleIdx[i]];
          }
          offset += g.spec.checks();
        }
      }
    }
    List<Rule> counted = List.of(Arrays.stream(ruleIdx).mapToObj(i -> rules[i]).toArray(Rule[]::new));
    return new Plan(ruleIdx, partitions.toArray(Partition[]::new), rulePartition, ruleOffset, windowIdx, counted);
  }

  /** A fixed-size bitset over rule indexes, usable as a map key. */
  static final class Bits {
    final long[] words;

    Bits(int bits) {
      words = new long[Math.max(1, (bits + 63) >>> 6)];
    }

    void set(int i) {
      words[i >>> 6] |= 1L << i;
    }

    java.util.stream.IntStream stream() {
      return java.util.BitSet.valueOf(words).stream();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Bits b && Arrays.equals(words, b.words);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(words);
    }
  }

  /** The bitset index that answers which rules apply to a message. */
  private static final class Selector {
    private final int size;
    private final Dimension[] dims;
    private final long[][] matchAny;
    private final List<Map<String, long[]>> matchBy = new ArrayList<>();
    private final long[] exemptRules;
    private final long[][] exemptAny;
    private final List<Map<String, long[]>> exemptBy = new ArrayList<>();
    private final long[][] needs;
    private final long[] needsContent;

    Selector(Rule[] rules) {
      this.size = rules.length;
      List<Dimension> used = new ArrayList<>();
      for (Rule r : rules) {
        for (Dimension d : r.match().values().keySet()) {
          addOnce(used, d);
        }
        for (Dimension d : r.exempt().values().keySet()) {
          addOnce(used, d);
        }
        for (Dimension d : r.key()) {
          if (d.selectable()) {
            addOnce(used, d);
          }
        }
      }
      dims = used.toArray(Dimension[]::new);
      matchAny = new long[dims.length][];
      exemptAny = new long[dims.length][];
      needs = new long[dims.length][];
      exemptRules = new Bits(size).words;
      needsContent = new Bits(size).words;
      for (int d = 0; d < dims.length; d++) {
        Bits any = new Bits(size);
        Bits exAny = new Bits(size);
        Bits need = new Bits(size);
        Map<String, Bits> by = new HashMap<>();
        Map<String, Bits> exBy = new HashMap<>();
        for (int r = 0; r < size; r++) {
          Rule rule = rules[r];
          var values = rule.match().values().get(dims[d]);
          if (values == null) {
            any.set(r);
          } else {
            for (String v : values) {
              by.computeIfAbsent(v, k -> new Bits(size)).set(r);
            }
          }
          var exValues = rule.exempt().values().get(dims[d]);
          if (!rule.exempt().isEmpty()) {
            if (exValues == null) {
              exAny.set(r);
            } else {
              for (String v : exValues) {
                exBy.computeIfAbsent(v, k -> new Bits(size)).set(r);
              }
            }
          }
          if (rule.key().contains(dims[d])) {
            need.set(r);
          }
        }
        matchAny[d] = any.words;
        exemptAny[d] = exAny.words;
        needs[d] = need.words;
        matchBy.add(merge(any, by));
        exemptBy.add(merge(exAny, exBy));
      }
      for (int r = 0; r < size; r++) {
        if (!rules[r].exempt().isEmpty()) {
          exemptRules[r >>> 6] |= 1L << r;
        }
        if (rules[r].key().contains(Dimension.CONTENT)) {
          needsContent[r >>> 6] |= 1L << r;
        }
      }
    }

    private static void addOnce(List<Dimension> list, Dimension d) {
      if (!list.contains(d)) {
        list.add(d);
      }
    }

    /** Per value: the rules listing it or accepting any value, precomputed so a lookup is one AND. */
    private static Map<String, long[]> merge(Bits any, Map<String, Bits> by) {
      Map<String, long[]> merged = new HashMap<>();
      by.forEach((v, bits) -> {
        long[] w = bits.words.clone();
        for (int i = 0; i < w.length; i++) {
          w[i] |= any.words[i];
        }
        merged.put(v, w);
      });
      return merged;
    }

    /** {@link #applicable} for at most 64 rules, as one word, without allocating. */
    long applicableWord(Message m) {
      return word(m, 0);
    }

    Bits applicable(Message m) {
      Bits out = new Bits(size);
      for (int i = 0; i < out.words.length; i++) {
        out.words[i] = word(m, i);
      }
      return out;
    }

    /**
     * Word {@code i} (rules {@code 64i} to {@code 64i + 63}) of the rules that apply to {@code m}: those
     * every dimension's value selects, that have their key's values, and that no exemption takes out.
     * The one selection path: a policy of more than 64 rules repeats the value lookups once per word.
     */
    private long word(Message m, int i) {
      long candidates = i < size >>> 6 ? -1L : (1L << (size & 63)) - 1;
      long exempted = exemptRules[i];
      for (int d = 0; d < dims.length; d++) {
        String v = dims[d].valueOf(m);
        long[] match = v == null ? null : matchBy.get(d).get(v);
        candidates &= (match == null ? matchAny[d] : match)[i];
        long[] ex = v == null ? null : exemptBy.get(d).get(v);
        exempted &= (ex == null ? exemptAny[d] : ex)[i];
        if (v == null) {
          candidates &= ~needs[d][i];
        }
      }
      if (m.content() == null && m.contentKey() == null) {
        candidates &= ~needsContent[i];
      }
      return candidates & ~exempted;
    }
  }
}
