package dev.fcap.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Decision;
import dev.fcap.model.Defer;
import dev.fcap.model.Dimension;
import dev.fcap.model.Headroom;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Priority;
import dev.fcap.model.Rule;
import dev.fcap.model.SendWindow;
import dev.fcap.store.ForwardingStore;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Deferred decisions on the embedded store against the {@link DeferralOracle}: random policies of
 * sliding-log rules (shared logs, headroom) and send windows in zones with daylight saving, random
 * traffic of deferred and plain messages (default and explicit {@code notAfter}, some already past),
 * message-id retries, releases of admitted and booked decisions, limit edits, resets and clock steps
 * back. Every decision's verdict, {@code deferred}, {@code sendAt} and blocking rules must agree, and
 * no admission or booking may put any window over its limit.
 */
public class DeferralOracleProperties {
  /** Bookings over every try: a policy that never refuses books nothing, but the property as a whole must. */
  private static final java.util.concurrent.atomic.AtomicLong BOOKED = new java.util.concurrent.atomic.AtomicLong();

  @net.jqwik.api.lifecycle.AfterContainer
  static void someDecisionsWereBooked() {
    assertThat(BOOKED.get()).as("bookings over every try").isGreaterThan(100);
  }
  static final int STEPS = Integer.getInteger("fcap.oracle.steps", 1500);
  public static final long START = 1_772_884_800_000L; // 2026-03-07T12:00:00Z: New York springs forward the next night
  private static final ZoneId[] ZONES = {ZoneId.of("UTC"), ZoneId.of("America/New_York"), ZoneId.of("Asia/Kolkata"),
      ZoneId.of("Australia/Lord_Howe")};
  private static final long[] WINDOWS = {5_000, 30_000, 120_000, 1_200_000, 10_800_000, 86_400_000};

  @Property(tries = 12)
  void deferredDecisionsAgreeWithTheOracle(@ForAll long seed) {
    check(seed, store -> store);
  }

  @Property(tries = 4)
  void deferredDecisionsThroughTheStoresFuturesAgreeWithTheOracle(@ForAll long seed) {
    check(seed, store -> new ForwardingStore(store) {});
  }

  /**
   * A rule keyed by the channel beside the recipient's: a deferral books one instant in the channel's
   * partition and the recipient's, found in rounds ({@code PartitionChain}); on time that never
   * goes back (the model keeps the recipient's partition's time only).
   */
  @Property(tries = 8)
  void deferredDecisionsOverSeveralPartitionsAgreeWithTheOracle(@ForAll long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    check(seed, withChannelRule(randomPolicy(random), random), random, store -> store, false);
  }

  private static void check(long seed, UnaryOperator<Store> path) {
    SplittableRandom random = new SplittableRandom(seed);
    check(seed, randomPolicy(random), random, path, true);
  }

  private static void check(long seed, Policy policy, SplittableRandom random, UnaryOperator<Store> path,
      boolean freeClock) {
    ManualClock clock = new ManualClock(START);
    Engine engine = Engine.builder(path.apply(MemoryStore.builder().clock(clock).segments(2).build()))
        .clock(clock).callerTime(true).releaseHorizon(Duration.ofDays(7)).policy(policy).build();
    Run run = new Run(seed, policy, OracleRun.engine(engine), Duration.ofDays(7).toMillis(), freeClock);
    run.steps(random, STEPS);
    assertThat(run.over).as("seed %d: %s", seed, run.first).isZero();
    assertThat(run.mismatches).as("seed %d: %s", seed, run.first).isZero();
    BOOKED.addAndGet(run.deferred);
  }

  /**
   * One stream of traffic into a target and the oracle. {@code rememberMs}: how long the target
   * remembers a message id ({@link DeferralOracle}); {@code freeClock}: whether the clock may step
   * back and rules be edited (an engine with caller time), or only moves on (a server on its clock).
   */
  public static final class Run {
    final long seed;
    final boolean freeClock;
    final OracleRun.Target target;
    final DeferralOracle oracle;
    Policy policy;
    /** Live decisions the target may release: {decision id, recipient}. */
    private final List<String[]> releasable = new ArrayList<>();
    long now = START;
    public long over;
    public long mismatches;
    public long deferred;
    public long admitted;
    public final List<String> first = new ArrayList<>();

    public Run(long seed, Policy policy, OracleRun.Target target, long rememberMs, boolean freeClock) {
      this.seed = seed;
      this.policy = policy;
      this.target = target;
      this.freeClock = freeClock;
      this.oracle = new DeferralOracle(policy, rememberMs);
    }

    /** Runs {@code steps} steps, then closes the target. */
    public void steps(SplittableRandom random, int steps) {
      try (target) {
        for (int s = 0; s < steps; s++) {
          int what = random.nextInt(1000);
          if (what < 80 && !releasable.isEmpty()) {
            release(random);
          } else if (what < 85) {
            String recipient = "r" + random.nextInt(4);
            target.reset(policy.tenant(), recipient);
            oracle.reset(recipient);
            releasable.removeIf(d -> d[1].equals(recipient)); // forgotten with the recipient's counts
          } else if (what < 88 && freeClock) {
            policy = editLimit(policy, random);
            target.setPolicy(policy);
            oracle.setPolicy(policy);
          } else {
            decide(random, s);
          }
        }
      }
    }

    private void release(SplittableRandom random) {
      int at = random.nextInt(releasable.size());
      String[] d = releasable.remove(at);
      String id = d[0];
      boolean released = target.release(id);
      if (!released) {
        mismatch("release of " + id + " answered false");
      }
      oracle.release(id);
      oracle.releaseAnswer(id);
    }

    private void decide(SplittableRandom random, int step) {
      now = freeClock ? advance(random, now) : Math.max(now, advance(random, now));
      Message m = randomMessage(random, now);
      Decision actual = target.decide(m, now, false);
      DeferralOracle.Expected want = oracle.decide(m, now, actual.decisionId());
      if (oracle.overAdmits(m, actual)) {
        over++;
        note(step, m, "over-admission: " + actual);
      }
      List<String> wrong = new ArrayList<>();
      if (actual.allowed() != want.allowed()) {
        wrong.add("allowed " + actual.allowed() + ", oracle " + want.allowed());
      }
      if (actual.deferred() != want.deferred()) {
        wrong.add("deferred " + actual.deferred() + ", oracle " + want.deferred());
      }
      if (actual.sendAt() != want.sendAt()) {
        wrong.add("sendAt " + actual.sendAt() + ", oracle " + want.sendAt());
      }
      if (actual.replayed() != want.replayed()) {
        wrong.add("replayed " + actual.replayed() + ", oracle " + want.replayed());
      }
      if (want.blockedBy() != null && !actual.blockedBy().equals(want.blockedBy())) {
        wrong.add("blockedBy " + actual.blockedBy() + ", oracle " + want.blockedBy());
      }
      if (!wrong.isEmpty()) {
        mismatches++;
        note(step, m, wrong + " " + actual);
      }
      deferred += actual.deferred() && !actual.replayed() ? 1 : 0;
      admitted += actual.allowed() && !actual.replayed() ? 1 : 0;
      if ((actual.allowed() || actual.deferred()) && !actual.replayed() && oracle.holds(actual.decisionId())) {
        releasable.add(new String[] {actual.decisionId(), m.recipient()});
      }
    }

    private void mismatch(String what) {
      mismatches++;
      if (first.size() < 10) {
        first.add(what);
      }
    }

    private void note(int step, Message m, String what) {
      if (first.size() < 10) {
        first.add("seed " + seed + " step " + step + " at " + now + " " + m + ": " + what);
      }
    }
  }

  /** The next instant: mostly small steps, now and then hours or a day, now and then back; within 5 days of START. */
  public static long advance(SplittableRandom random, long now) {
    int kind = random.nextInt(100);
    if (kind < 5) {
      return now - random.nextLong(20_000); // the clock steps back: the partition decides at its latest time
    } else if (kind < 8 && now < START + 4 * 86_400_000L) {
      return now + random.nextLong(10_800_000);
    } else if (kind < 9 && now < START + 4 * 86_400_000L) {
      return now + 86_400_000 + random.nextLong(3_600_000);
    }
    return kind < 30 ? now : now + random.nextLong(20_000);
  }

  /**
   * A message to one of four recipients, each in its own zone, and three contents, of random
   * priority, cost and message id (a small pool: retries), deferred by default, until a random instant up to two days
   * ahead, or until an instant already past, or not deferred.
   */
  public static Message randomMessage(SplittableRandom random, long now) {
    int recipient = random.nextInt(4);
    Message.Builder b = Message.builder("r" + recipient).content("c" + random.nextInt(3))
        .priority(Priority.values()[random.nextInt(Priority.values().length)])
        .cost(random.nextInt(5) == 0 ? 2 : 1);
    b.channel(random.nextBoolean() ? "sms" : "push");
    if (recipient > 0) {
      // a recipient keeps its zone (r0 none: the policy's): a local period judged in two zones counts
      // conservatively (docs/algorithms.md), which an exact model cannot follow
      b.timeZone(ZONES[recipient]);
    }
    if (random.nextInt(6) == 0) {
      b.messageId("m" + random.nextInt(6));
    }
    int defer = random.nextInt(10);
    if (defer < 3) {
      b.defer(Defer.BY_DEFAULT);
    } else if (defer < 6) {
      b.defer(new Defer(now + random.nextLong(2 * 86_400_000L)));
    } else if (defer == 6) {
      b.defer(new Defer(Math.max(1, now - random.nextLong(60_000)))); // already past: nothing can be booked
    }
    return b.build();
  }

  /**
   * Sliding-log and (a quarter of them) fixed-window rules keyed by the recipient (shared logs,
   * headroom; half the fixed windows caps of a local day, week or month or windows of days in a zone) and send windows in zones
   * with daylight saving.
   */
  public static Policy randomPolicy(SplittableRandom random) {
    List<Rule> rules = new ArrayList<>();
    int counting = 1 + random.nextInt(3);
    for (int i = 0; i < counting; i++) {
      List<Dimension> key = random.nextBoolean() ? List.of(Dimension.RECIPIENT)
          : List.of(Dimension.RECIPIENT, Dimension.CONTENT);
      long limit = 1 + random.nextInt(5);
      Algorithm algorithm = random.nextInt(4) == 0 ? Algorithm.FIXED_WINDOW : Algorithm.SLIDING_LOG;
      Rule r = new Rule("r" + i, null, limit, Duration.ofMillis(WINDOWS[random.nextInt(WINDOWS.length)]), key, null,
          null, algorithm, 0, Mode.ENFORCE, null);
      if (algorithm == Algorithm.FIXED_WINDOW && random.nextBoolean()) {
        r = calendarRule("r" + i, limit, key, random);
      }
      if (random.nextInt(3) == 0) {
        long low = random.nextLong(limit + 1);
        long normal = random.nextLong(low + 1);
        r = r.withHeadroom(new Headroom(random.nextLong(normal + 1), normal, low));
      }
      rules.add(r);
    }
    for (int i = random.nextInt(3); i > 0; i--) {
      rules.add(random.nextInt(rules.size() + 1), sendWindow(random, "w" + i));
    }
    ZoneId zone = random.nextInt(3) == 0 ? ZONES[random.nextInt(ZONES.length)] : null;
    return new Policy("default", 1, rules, zone);
  }

  /**
   * {@code p} with a rule keyed by the channel alone (a sliding log or a fixed window of 2 to 7 in
   * one of the windows, shared by every recipient), at a random place among its rules.
   */
  public static Policy withChannelRule(Policy p, SplittableRandom random) {
    List<Rule> rules = new ArrayList<>(p.rules());
    Algorithm algorithm = random.nextInt(3) == 0 ? Algorithm.FIXED_WINDOW : Algorithm.SLIDING_LOG;
    Rule channel = new Rule("per-channel", null, 2 + random.nextInt(6),
        Duration.ofMillis(WINDOWS[random.nextInt(WINDOWS.length)]), List.of(Dimension.CHANNEL), null, null, algorithm,
        0, Mode.ENFORCE, null);
    rules.add(random.nextInt(rules.size() + 1), channel);
    return new Policy(p.tenant(), p.version(), rules, p.timeZone());
  }

  /**
   * A cap of a local day, ISO week or month, in a zone of {@link #ZONES} or the recipient's; or (a
   * quarter of them) a window of 2 or 3 days in a zone of {@link #ZONES}: runs of local days.
   */
  private static Rule calendarRule(String id, long limit, List<Dimension> key, SplittableRandom random) {
    if (random.nextInt(4) == 0) {
      return new Rule(id, null, limit, Duration.ofDays(2 + random.nextInt(2)), key, null, null, Algorithm.FIXED_WINDOW,
          0, Mode.ENFORCE, ZONES[random.nextInt(ZONES.length)], false, null, null);
    }
    CalendarUnit unit = CalendarUnit.values()[random.nextInt(CalendarUnit.values().length)];
    boolean recipientZone = random.nextBoolean();
    ZoneId zone = recipientZone ? null : ZONES[random.nextInt(ZONES.length)];
    return new Rule(id, null, limit, unit.nominal(), key, null, null, Algorithm.FIXED_WINDOW, 0, Mode.ENFORCE, zone,
        recipientZone, unit, null);
  }

  private static Rule sendWindow(SplittableRandom random, String id) {
    List<SendWindow.Interval> allow = new ArrayList<>();
    for (int i = 1 + random.nextInt(2); i > 0; i--) {
      Set<DayOfWeek> days = EnumSet.allOf(DayOfWeek.class);
      if (random.nextInt(3) == 0) {
        days.remove(DayOfWeek.values()[random.nextInt(7)]);
        days.remove(DayOfWeek.values()[random.nextInt(7)]);
      }
      LocalTime from = LocalTime.of(random.nextInt(24), random.nextInt(4) * 15);
      LocalTime to = LocalTime.of(random.nextInt(24), random.nextInt(4) * 15);
      if (from.equals(to)) {
        to = to.plusMinutes(30);
      }
      allow.add(new SendWindow.Interval(days, from, to));
    }
    ZoneId zone = random.nextBoolean() ? null : ZONES[random.nextInt(ZONES.length)];
    return Rule.ofSendWindow(id, null, new SendWindow(zone, allow, Set.of()), null, null, Mode.ENFORCE);
  }

  /**
   * A counting rule's limit raised, its window kept: what retention dropped under the rules before is
   * then never read (a lower limit keeps fewer entries, and a release of a kept one would uncover a
   * window that also held dropped ones; a longer window would read entries dropped as too old).
   */
  private static Policy editLimit(Policy p, SplittableRandom random) {
    List<Rule> rules = new ArrayList<>(p.rules());
    int i = random.nextInt(rules.size());
    Rule r = rules.get(i);
    if (r.isSendWindow()) {
      return p;
    }
    long limit = r.limit() + 1 + random.nextInt(2);
    Headroom h = r.headroom();
    rules.set(i, r.withLimit(limit)
        .withHeadroom(new Headroom(Math.min(h.high(), limit), Math.min(h.normal(), limit), Math.min(h.low(), limit))));
    return new Policy(p.tenant(), p.version() + 1, rules, p.timeZone());
  }
}
