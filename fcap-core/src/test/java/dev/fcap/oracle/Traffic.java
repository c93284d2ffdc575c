package dev.fcap.oracle;

import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Condition;
import dev.fcap.model.Dimension;
import dev.fcap.model.Headroom;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Priority;
import dev.fcap.model.Rule;
import dev.fcap.model.SendWindow;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The one generator of adversarial traffic: random policies (up to 12 rules, every algorithm, shadow
 * rules, match and exempt, keys with and without the recipient, time-zone days, one large limit) and
 * a stream of steps against them: decisions with costs above 1, dry runs, releases, rule edits that
 * keep counts, resets, bursts in one millisecond, clock steps back and idle gaps of days. Recipients
 * include ids that try to alias or move keys: {@code {a}}, {@code a}{b}, {@code 名字}, long ones.
 *
 * <p>With {@link Options#zones()}, messages carry the recipient's time zone (each recipient mostly its
 * own, sometimes another, sometimes none: the policy's default), among zones with daylight saving,
 * half- and quarter-hour offsets and a 30-minute change, and now and then the clock jumps to just
 * before a zone's next transition or a quarter hour (where windows open and close);
 * {@link #randomPolicy(long, int, boolean, boolean)} adds send windows and local-calendar caps.
 *
 * <p>Deterministic from its seed. {@link Options} turn off what a path cannot take (a send log has
 * no releases, dry runs, edits or resets).
 */
public final class Traffic {
  /** One thing to do to the system under test. */
  public sealed interface Step permits Decide, Release, Edit, Reset {}

  /** Decide (or dry-run) {@code message} at {@code time}. */
  public record Decide(Message message, long time, boolean dryRun) implements Step {}

  /**
   * Release an earlier admitted decision: the newest one not released yet ({@code pick} = -1), or
   * one picked by {@code pick} among the recent ones.
   */
  public record Release(int pick) implements Step {}

  /** Replace the policy by an edit of it: limits and windows change, counters keep their counts. */
  public record Edit(Policy policy) implements Step {}

  /** Forget a recipient. */
  public record Reset(String recipient, long time) implements Step {}

  /**
   * What the stream may contain.
   *
   * @param releases releases of the newest admitted decision not released yet (a send that failed at
   *     once), also of one made before a rule edit
   * @param olderReleases releases of any recent admitted decision, at a later time than it was made
   * @param clockBack steps of the clock back by up to 3 s
   * @param zones messages with time zones, and clock jumps to just before zone transitions and quarter hours
   */
  public record Options(boolean releases, boolean olderReleases, boolean dryRuns, boolean edits, boolean resets,
      boolean clockBack, int recipients, boolean zones) {
    /** Everything the engine and the stores answer exactly today (see docs/algorithms.md, "How it is tested"). */
    public static final Options ALL = new Options(true, true, true, true, true, true, 40, false);
    /** What a send log can hold: decisions only (in log order, clock steps back included). */
    public static final Options SEND_LOG = new Options(false, false, false, false, false, true, 40, false);

    public Options(boolean releases, boolean olderReleases, boolean dryRuns, boolean edits, boolean resets,
        boolean clockBack, int recipients) {
      this(releases, olderReleases, dryRuns, edits, resets, clockBack, recipients, false);
    }

    public Options withClockBack(boolean on) {
      return new Options(releases, olderReleases, dryRuns, edits, resets, on, recipients, zones);
    }

    public Options withOlderReleases(boolean on) {
      return new Options(releases, on, dryRuns, edits, resets, clockBack, recipients, zones);
    }

    public Options withZones(boolean on) {
      return new Options(releases, olderReleases, dryRuns, edits, resets, clockBack, recipients, on);
    }
  }

  /** Ids that try to alias other ids or move to other slots in a cluster. */
  private static final String[] ODD_IDS = {
    "{a}", "a}{b", "名字", "{", "}", "a:b", "a|b", "+8613900000000", "{+8613900000000}", "x".repeat(300), "é", "e\u0301"
  };
  private static final String[] CHANNELS = {"sms", "sms", "push", "email"};
  private static final String[] CATEGORIES = {"service", "service", "promo", "marketing", "otp"};
  private static final ZoneId[] ZONES = {
    ZoneId.of("Asia/Shanghai"), ZoneId.of("America/New_York"), ZoneId.of("Asia/Kolkata"), ZoneId.of("UTC")
  };

  /** Recipients' zones: daylight saving both hemispheres, +05:30, +05:45, Lord Howe's 30-minute change, +12:45/+13:45. */
  static final ZoneId[] MESSAGE_ZONES = {
    ZoneId.of("America/New_York"), ZoneId.of("Europe/London"), ZoneId.of("Asia/Kolkata"), ZoneId.of("Asia/Kathmandu"),
    ZoneId.of("Australia/Lord_Howe"), ZoneId.of("Pacific/Chatham"), ZoneId.of("UTC"), null
  };
  /** Local dates near the traffic's start and the 2026 transitions of {@link #MESSAGE_ZONES}: where closed dates bite. */
  private static final String[] NEAR_DATES = {
    "2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05", "2026-03-08", "2026-03-09", "2026-03-29",
    "2026-04-05", "2026-09-27", "2026-10-04", "2026-10-25", "2026-11-01"
  };

  /** A 10^6 limit by default; {@code -Dfcap.oracle.largeLimit} raises or lowers it. */
  public static final long LARGE_LIMIT = Long.getLong("fcap.oracle.largeLimit", 1_000_000L);

  private final long seed;
  private final SplittableRandom random;
  /** The messages' priorities, drawn apart so that the rest of a seed's traffic stays what it was. */
  private final SplittableRandom priorities;
  private final Options options;
  private final String[] recipients;
  private final ZoneId[] recipientZones;
  private Policy policy;
  private long now;
  private long decisions;

  public Traffic(long seed, Policy policy, Options options, long start) {
    this.seed = seed;
    this.random = new SplittableRandom(seed);
    this.priorities = new SplittableRandom(seed ^ 0x9e10L);
    this.options = options;
    this.policy = policy;
    this.now = start;
    this.recipients = new String[options.recipients()];
    for (int i = 0; i < recipients.length; i++) {
      recipients[i] = i < ODD_IDS.length ? ODD_IDS[i] : "+86139" + String.format("%08d", i * 7919);
    }
    this.recipientZones = new ZoneId[recipients.length];
    for (int i = 0; i < recipients.length; i++) {
      recipientZones[i] = MESSAGE_ZONES[Math.floorMod(i * 31 + (int) seed, MESSAGE_ZONES.length)];
    }
  }

  public Options options() {
    return options;
  }

  public long seed() {
    return seed;
  }

  public String[] recipients() {
    return recipients.clone();
  }

  public Policy policy() {
    return policy;
  }

  /** The next step. */
  public Step next() {
    int action = random.nextInt(1000);
    if (options.edits() && options.zones() && action >= 990) {
      policy = editWindow(policy); // a send window replaced mid-stream
      return new Edit(policy);
    }
    if (options.releases() && action < 40) {
      return new Release(options.olderReleases() && random.nextBoolean() ? random.nextInt(1 << 30) : -1);
    }
    if (options.edits() && action < 48) {
      policy = edit(policy);
      return new Edit(policy);
    }
    if (options.resets() && action < 52) {
      return new Reset(recipients[random.nextInt(recipients.length)], advance());
    }
    boolean dryRun = options.dryRuns() && action < 150;
    return new Decide(message(), advance(), dryRun);
  }

  /** Time moves by bursts in one millisecond, small steps, steps back, minutes, and idle days. */
  private long advance() {
    if (options.zones() && random.nextInt(1000) < 4) {
      return now = jumpNearABoundary();
    }
    int jump = random.nextInt(10_000);
    if (jump < 2500) {
      return now; // a burst: several decisions in the same millisecond
    }
    if (options.clockBack() && jump < 2600) {
      now -= 1 + random.nextInt(3000);
    } else if (jump < 2610) {
      now += Duration.ofDays(1 + random.nextInt(3)).toMillis() + random.nextInt(3_600_000);
    } else if (jump < 2800) {
      now += random.nextInt(600_000);
    } else {
      now += random.nextInt(2000);
    }
    return now;
  }

  /**
   * Just before the next daylight-saving transition of a zone (by up to 10 minutes), or just before
   * the next quarter hour (by up to 5 s), never back in time.
   */
  private long jumpNearABoundary() {
    if (random.nextBoolean()) {
      long quarter = 900_000L;
      return Math.max(now, Math.floorDiv(now, quarter) * quarter + quarter - random.nextInt(5000));
    }
    ZoneId zone = MESSAGE_ZONES[random.nextInt(MESSAGE_ZONES.length)];
    ZoneOffsetTransition next = zone == null ? null : zone.getRules().nextTransition(Instant.ofEpochMilli(now));
    if (next == null) {
      return now;
    }
    return Math.max(now, next.getInstant().toEpochMilli() - random.nextInt(600_000));
  }

  private Message message() {
    decisions++;
    // a hot recipient (another one every 500 decisions) takes a third of the traffic, so limits bite
    int hotAt = (int) ((decisions / 500) % recipients.length);
    int at = random.nextInt(3) == 0 ? hotAt : random.nextInt(recipients.length);
    String recipient = recipients[at];
    Message.Builder b = Message.builder(recipient)
        .channel(CHANNELS[random.nextInt(CHANNELS.length)])
        .category(CATEGORIES[random.nextInt(CATEGORIES.length)]);
    if (random.nextInt(6) != 0) {
      b.content("content " + random.nextInt(8));
    }
    if (random.nextInt(8) != 0) {
      b.sender("sender" + random.nextInt(3));
    }
    int c = random.nextInt(100);
    if (c < 8) {
      b.cost(2 + random.nextInt(4));
    } else if (c < 9) {
      b.cost(LARGE_LIMIT / 3 + random.nextInt(3)); // bites the large limit; above every small one
    }
    // half normal (the default, unnamed), the rest of every other class
    int p = priorities.nextInt(8);
    if (p < 4) {
      b.priority(p == 0 ? null : Priority.values()[(p + 1) % 4]);
    } else {
      b.priority(Priority.values()[p - 4]);
    }
    b.override(priorities.nextInt(50) == 0); // counted by every rule, refused by none

    if (options.zones()) {
      // mostly the recipient's own zone; sometimes another (the recipient travels) or none (the policy's)
      b.timeZone(random.nextInt(8) != 0 ? recipientZones[at] : MESSAGE_ZONES[random.nextInt(MESSAGE_ZONES.length)]);
    }
    return b.build();
  }

  // ------------------------------------------------------------------------------------------------
  // Policies

  private static final List<List<Dimension>> RECIPIENT_KEYS = List.of(
      List.of(Dimension.RECIPIENT), List.of(Dimension.RECIPIENT), List.of(Dimension.RECIPIENT, Dimension.CONTENT),
      List.of(Dimension.RECIPIENT, Dimension.CHANNEL));
  private static final List<List<Dimension>> SHARED_KEYS = List.of(
      List.of(Dimension.SENDER), List.of(Dimension.CHANNEL), List.of(Dimension.CHANNEL, Dimension.CONTENT),
      List.of(Dimension.CATEGORY));

  /**
   * A random policy of 1 to {@code maxRules} rules of every algorithm; {@code recipientOnly} keeps
   * every key on the recipient (the policies {@code fcap replay} decides on several threads).
   */
  public static Policy randomPolicy(long seed, int maxRules, boolean recipientOnly) {
    return randomPolicy(seed, maxRules, recipientOnly, false);
  }

  /**
   * {@link #randomPolicy(long, int, boolean)}, and with {@code windows} also 0 to 2 send windows (in
   * the recipient's zone or a fixed one; intervals spanning midnight, several intervals, subsets of
   * days, closed dates near the traffic's, inside spring-forward gaps; matching a category; shadow
   * sometimes), 0 to 2 fixed-window caps of a local day, ISO week or month (in the recipient's zone
   * or a fixed one) and sometimes a default zone for the policy. The rules without windows are those
   * of the same seed without them.
   */
  public static Policy randomPolicy(long seed, int maxRules, boolean recipientOnly, boolean windows) {
    Policy base = randomPolicy0(seed, maxRules, recipientOnly);
    if (!windows) {
      return base;
    }
    SplittableRandom random = new SplittableRandom(seed ^ 0x5eedL);
    List<Rule> rules = new ArrayList<>(base.rules());
    int sendWindows = random.nextInt(3);
    for (int i = 0; i < sendWindows; i++) {
      rules.add(random.nextInt(rules.size() + 1), sendWindowRule(random, "w" + i));
    }
    int calendars = random.nextInt(3);
    for (int i = 0; i < calendars; i++) {
      CalendarUnit unit = CalendarUnit.values()[random.nextInt(CalendarUnit.values().length)];
      boolean recipientZone = random.nextInt(4) != 0;
      ZoneId zone = recipientZone ? null : MESSAGE_ZONES[random.nextInt(MESSAGE_ZONES.length - 1)];
      long limit = unit == CalendarUnit.DAY ? 1 + random.nextInt(6) : 2 + random.nextInt(20);
      Condition match = random.nextBoolean() ? null
          : new Condition(Map.of(Dimension.CATEGORY, Set.of(CATEGORIES[random.nextInt(CATEGORIES.length)])));
      Mode mode = random.nextInt(5) == 0 ? Mode.SHADOW : Mode.ENFORCE;
      rules.add(random.nextInt(rules.size() + 1), new Rule("c" + i, null, limit, unit.nominal(),
          List.of(Dimension.RECIPIENT), match, null, Algorithm.FIXED_WINDOW, 0, mode, zone, recipientZone, unit, null));
    }
    ZoneId defaultZone = random.nextInt(3) == 0 ? MESSAGE_ZONES[random.nextInt(MESSAGE_ZONES.length - 1)] : null;
    return new Policy(base.tenant(), base.version(), rules, defaultZone);
  }

  private static Rule sendWindowRule(SplittableRandom random, String id) {
    ZoneId zone = random.nextInt(3) == 0 ? MESSAGE_ZONES[random.nextInt(MESSAGE_ZONES.length - 1)] : null;
    int intervals = 1 + random.nextInt(3);
    List<SendWindow.Interval> allow = new ArrayList<>();
    for (int i = 0; i < intervals; i++) {
      Set<DayOfWeek> days = EnumSet.allOf(DayOfWeek.class);
      if (random.nextBoolean()) {
        days = EnumSet.noneOf(DayOfWeek.class);
        for (DayOfWeek d : DayOfWeek.values()) {
          if (random.nextInt(3) != 0) {
            days.add(d);
          }
        }
        if (days.isEmpty()) {
          days.add(DayOfWeek.values()[random.nextInt(7)]);
        }
      }
      LocalTime from;
      LocalTime to;
      int shape = random.nextInt(10);
      if (shape == 0) { // around the spring-forward gaps: 02:00 to 03:00 (New York), 02:00 to 02:30 (Lord Howe)
        from = LocalTime.of(2, random.nextInt(4) * 10);
        to = LocalTime.of(2 + random.nextInt(2), 10 + random.nextInt(4) * 10);
      } else if (shape < 4) { // spans midnight
        from = LocalTime.of(18 + random.nextInt(6), random.nextInt(4) * 15);
        to = LocalTime.of(random.nextInt(10), random.nextInt(4) * 15);
      } else {
        from = LocalTime.of(random.nextInt(24), random.nextInt(60));
        to = LocalTime.of(random.nextInt(24), random.nextInt(4) * 15);
      }
      if (from.equals(to)) {
        to = to.plusMinutes(1);
      }
      allow.add(new SendWindow.Interval(days, from, to));
    }
    Set<LocalDate> closed = new HashSet<>();
    for (int i = random.nextInt(3); i > 0; i--) {
      closed.add(LocalDate.parse(NEAR_DATES[random.nextInt(NEAR_DATES.length)]));
    }
    Condition match = random.nextInt(3) == 0 ? null
        : new Condition(Map.of(Dimension.CATEGORY, Set.of("marketing", "promo")));
    Condition exempt = random.nextInt(4) == 0 ? new Condition(Map.of(Dimension.CHANNEL, Set.of("email"))) : null;
    Mode mode = random.nextInt(5) == 0 ? Mode.SHADOW : Mode.ENFORCE;
    Condition countOnly = random.nextInt(4) == 0 ? new Condition(Map.of(Dimension.CATEGORY, Set.of("promo"))) : null;
    return Rule.ofSendWindow(id, null, new SendWindow(zone, allow, closed), match, exempt, mode)
        .withCountOnly(countOnly);
  }

  /** A random send window of the policy replaced by another (windows count nothing: nothing to keep). */
  private Policy editWindow(Policy p) {
    List<Rule> rules = new ArrayList<>(p.rules());
    int i = random.nextInt(rules.size());
    if (!rules.get(i).isSendWindow()) {
      return p;
    }
    Rule r = rules.get(i);
    Rule next = sendWindowRule(random, r.id());
    rules.set(i, Rule.ofSendWindow(r.id(), null, next.sendWindow(), next.match(), next.exempt(), r.mode()));
    return p.withRules(rules).withVersion(p.version() + 1);
  }

  private static Policy randomPolicy0(long seed, int maxRules, boolean recipientOnly) {
    SplittableRandom random = new SplittableRandom(seed);
    int n = 1 + random.nextInt(maxRules);
    List<Rule> rules = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      boolean shared = !recipientOnly && random.nextInt(4) == 0;
      List<Dimension> key = shared ? SHARED_KEYS.get(random.nextInt(SHARED_KEYS.size()))
          : RECIPIENT_KEYS.get(random.nextInt(RECIPIENT_KEYS.size()));
      Algorithm algorithm = Algorithm.values()[random.nextInt(Algorithm.values().length)];
      if (random.nextBoolean()) {
        algorithm = Algorithm.SLIDING_LOG; // the default is the common case
      }
      long limit = shared ? 10 + random.nextInt(60) : 1 + random.nextInt(12);
      long windowMs = 1000 + random.nextInt(600_000);
      if (random.nextInt(5) == 0) {
        windowMs = Duration.ofHours(1 + random.nextInt(24)).toMillis();
      }
      ZoneId zone = null;
      if (algorithm == Algorithm.FIXED_WINDOW && random.nextInt(3) == 0) {
        // a local day, or now and then runs of 2 or 3 local days
        windowMs = Duration.ofDays(random.nextInt(4) == 0 ? 2 + random.nextInt(2) : 1).toMillis();
        zone = ZONES[random.nextInt(ZONES.length)];
      }
      int precision = algorithm == Algorithm.SLIDING_COUNTER ? 1 + random.nextInt(60) : 0;
      Mode mode = random.nextInt(5) == 0 ? Mode.SHADOW : Mode.ENFORCE;
      Condition match = null;
      Condition exempt = null;
      if (random.nextInt(4) == 0) {
        match = new Condition(Map.of(Dimension.CHANNEL, Set.of(CHANNELS[random.nextInt(CHANNELS.length)])));
      }
      if (random.nextInt(4) == 0) {
        exempt = new Condition(Map.of(Dimension.CATEGORY, Set.of("otp")));
      }
      rules.add(new Rule("r" + i, null, limit, Duration.ofMillis(windowMs), key, match, exempt, algorithm, precision,
          mode, zone));
    }
    // headroom on a third of the rules, drawn apart so that the rules are those of the seed without it
    SplittableRandom headroom = new SplittableRandom(seed ^ 0x4ead);
    for (int i = 0; i < rules.size(); i++) {
      if (headroom.nextInt(3) == 0) {
        Rule r = rules.get(i);
        long low = headroom.nextLong(r.limit() + 1);
        long normal = headroom.nextLong(low + 1);
        rules.set(i, r.withHeadroom(new Headroom(headroom.nextLong(normal + 1), normal, low)));
      }
      if (headroom.nextInt(5) == 0) { // one-time passwords go, and use up the cap
        rules.set(i, rules.get(i).withCountOnly(new Condition(Map.of(Dimension.CATEGORY, Set.of("otp")))));
      }
    }
    if (!recipientOnly && rules.size() < maxRules && random.nextInt(3) == 0) {
      // a channel-wide cap with a large limit: its cost per decision must not depend on the limit
      rules.add(Rule.of("large", LARGE_LIMIT, Duration.ofHours(1), Dimension.CHANNEL));
    } else if (rules.size() < maxRules && random.nextInt(3) == 0) {
      rules.add(Rule.of("large", LARGE_LIMIT, Duration.ofHours(1), Dimension.RECIPIENT));
    }
    return new Policy("default", 1, rules);
  }

  /**
   * An edit of one rule that keeps counts exactly (docs/algorithms.md): any limit of a sliding-log,
   * sliding-counter or fixed-window rule, and a narrower window of a sliding-log rule. (A gcra edit
   * rescales what is in flight, rounded up; a widened window counts what the log still holds; both
   * are conservative rather than exact, so the oracle cannot predict them to the unit.)
   */
  private Policy edit(Policy p) {
    List<Rule> rules = new ArrayList<>(p.rules());
    int i = random.nextInt(rules.size());
    Rule r = rules.get(i);
    if (r.isSendWindow() || r.algorithm() == Algorithm.GCRA || r.limit() >= LARGE_LIMIT) {
      return p;
    }
    if (r.algorithm() == Algorithm.SLIDING_LOG && r.calendar() == null && random.nextBoolean() && r.windowMs() > 2000) {
      r = r.withWindow(Duration.ofMillis(r.windowMs() / 2 + random.nextInt((int) Math.min(r.windowMs() / 2, 1 << 30))));
    } else {
      r = r.withLimit(Math.max(1, r.limit() + random.nextInt(7) - 3));
      Headroom h = r.headroom(); // kept within the new limit, as the rules parser requires
      r = r.withHeadroom(new Headroom(Math.min(h.high(), r.limit()), Math.min(h.normal(), r.limit()),
          Math.min(h.low(), r.limit())));
    }
    rules.set(i, r);
    return p.withRules(rules).withVersion(p.version() + 1);
  }

  /** The policy as a rules file ({@code fcap replay --rules}). */
  public static String yaml(Policy p) {
    StringBuilder y = new StringBuilder("policies:\n  - tenant: ").append(p.tenant()).append("\n    rules:\n");
    for (Rule r : p.rules()) {
      y.append("      - id: ").append(r.id()).append('\n')
          .append("        limit: ").append(r.limit()).append('\n')
          .append("        window: ").append(r.windowMs()).append("ms\n")
          .append("        key: ").append(r.key().stream().map(Dimension::toString).toList()).append('\n')
          .append("        algorithm: ").append(r.algorithm().id()).append('\n')
          .append("        mode: ").append(r.enforced() ? "enforce" : "shadow").append('\n');
      if (r.algorithm() == Algorithm.SLIDING_COUNTER) {
        y.append("        precision: ").append(r.precision()).append('\n');
      }
      if (!r.headroom().isNone()) {
        y.append("        headroom: {high: ").append(r.headroom().high()).append(", normal: ")
            .append(r.headroom().normal()).append(", low: ").append(r.headroom().low()).append("}\n");
      }
      if (r.zone() != null) {
        y.append("        zone: ").append(r.zone().getId()).append('\n');
      }
      condition(y, "match", r.match());
      condition(y, "exempt", r.exempt());
      if (r.countOnly() != null) {
        condition(y, "countOnly", r.countOnly());
      }
    }
    return y.toString();
  }

  private static void condition(StringBuilder y, String name, Condition c) {
    if (c.isEmpty()) {
      return;
    }
    y.append("        ").append(name).append(":\n");
    c.values().forEach((d, values) -> y.append("          ").append(d).append(": ").append(List.copyOf(values)).append('\n'));
  }
}
