package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.model.Algorithm;
import dev.fcap.model.Decision;
import dev.fcap.model.Defer;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.oracle.DeferralOracleProperties;
import dev.fcap.oracle.OracleRun;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.store.redis.testing.RedisExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Deferred decisions on Redis (standalone, a 3-master cluster, the grouped layout; real processes)
 * against the {@link dev.fcap.oracle.DeferralOracle}: the traffic of {@link DeferralOracleProperties}
 * (deferred and plain messages, {@code notAfter} ahead and past, message-id retries, releases of
 * admitted and booked decisions, limit edits, resets, clock steps back) decided by the script's
 * general path (bookings, logs and fixed windows holding bookings) and its fast path (everything
 * else) in turn. Every verdict, {@code deferred}, {@code sendAt} and blocking rule must agree, and
 * no window may go over its limit.
 */
class RedisDeferralOracleIT {
  static final int STEPS = Integer.getInteger("fcap.oracle.steps", 1500);

  @RegisterExtension
  static final RedisExtension STANDALONE = RedisExtension.standalone();

  @RegisterExtension
  static final RedisExtension CLUSTER = RedisExtension.cluster();

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4})
  void standaloneBooksAsTheOracleDoes(long seed) throws Exception {
    STANDALONE.deployment().flushAll();
    check(STANDALONE.uri(), seed, 0);
  }

  @ParameterizedTest
  @ValueSource(longs = {7, 8})
  void clusterBooksAsTheOracleDoes(long seed) throws Exception {
    CLUSTER.deployment().flushAll();
    check(CLUSTER.uri(), seed, 0);
  }

  @ParameterizedTest
  @ValueSource(longs = {9})
  void groupedBooksAsTheOracleDoes(long seed) throws Exception {
    STANDALONE.deployment().flushAll();
    check(STANDALONE.uri(), seed, 3);
  }

  /**
   * A rule keyed by the channel beside the recipient's: its partition lies in another slot (on
   * another master, mostly), and a deferral is booked at one instant in both; time never goes back.
   */
  @ParameterizedTest
  @ValueSource(longs = {11, 12})
  void clusterBooksOverSeveralPartitionsAsTheOracleDoes(long seed) throws Exception {
    CLUSTER.deployment().flushAll();
    SplittableRandom random = new SplittableRandom(seed);
    check(CLUSTER.uri(), seed, 0, DeferralOracleProperties.withChannelRule(DeferralOracleProperties.randomPolicy(random),
        random), random, false);
  }

  /**
   * The oracle judges verdicts, instants and blocking rules; this holds the script's whole decisions
   * (every rule's used, remaining and retry, on logs holding bookings too) to the embedded store's on
   * the same traffic.
   */
  @ParameterizedTest
  @ValueSource(longs = {5, 6})
  void standaloneDecidesAsTheEmbeddedStoreDoes(long seed) throws Exception {
    STANDALONE.deployment().flushAll();
    SplittableRandom random = new SplittableRandom(seed);
    Policy policy = DeferralOracleProperties.randomPolicy(random);
    ManualClock clock = new ManualClock(DeferralOracleProperties.START);
    BesideTheEmbeddedStore target = new BesideTheEmbeddedStore(RedisStore.builder(STANDALONE.uri()).clock(clock).build(),
        MemoryStore.builder().clock(clock).build(), clock, policy);
    var run = new DeferralOracleProperties.Run(seed, policy, target, Duration.ofDays(7).toMillis(), true);
    run.steps(random, STEPS);
    assertThat(run.mismatches).as("seed %d: %s", seed, run.first).isZero();
    assertThat(target.differences).as("seed %d: %s", seed, target.first).isZero();
    assertThat(run.deferred).as("seed %d: bookings", seed).isGreaterThan(100);
  }

  /**
   * A rule whose limit shrank under a full log: the booking after it keeps, before now, only the
   * newest entries the new limit reads, on both stores alike (the script's pruning of a log read
   * from its gap form).
   */
  @Test
  void aBookingAfterTheLimitShrankKeepsWhatTheNewLimitReads() throws Exception {
    STANDALONE.deployment().flushAll();
    ManualClock clock = new ManualClock(DeferralOracleProperties.START);
    long t0 = clock.millis();
    Policy tenADay = new Policy("default", 1, List.of(Rule.of("per-day", 10, Duration.ofDays(1), Dimension.RECIPIENT)));
    BesideTheEmbeddedStore target = new BesideTheEmbeddedStore(RedisStore.builder(STANDALONE.uri()).clock(clock).build(),
        MemoryStore.builder().clock(clock).build(), clock, tenADay);
    try (target) {
      Message m = Message.builder("r").build();
      for (int i = 0; i < 10; i++) {
        assertThat(target.decide(m, t0 + i * 1000L, false).allowed()).isTrue();
      }
      target.setPolicy(new Policy("default", 2, List.of(Rule.of("per-day", 3, Duration.ofDays(1), Dimension.RECIPIENT))));
      Decision booked = target.decide(Message.builder("r").defer(Defer.BY_DEFAULT).build(), t0 + 20_000, false);
      assertThat(booked.sendAt()).as("when the entry at +7 s leaves").isEqualTo(t0 + 86_400_000 + 7000);
      List<String> states = DifferentialTraffic.states(target.redisStore, dev.fcap.store.StoreContract.partitionOf("r"));
      assertThat(states).hasSize(1);
      assertThat(HexFormat.of().parseHex(states.get(0).split(" ")[2])).as("the booking and the 3 newest entries")
          .hasSize(9 + 4 * 4);
      assertThat(target.differences).as("%s", target.first).isZero();
    }
  }

  /**
   * Decides every message on the Redis engine and on an embedded one, counting the decisions that
   * differ in anything but their ids, and the recipient's states that differ after it (byte for byte:
   * what a booking keeps and prunes); a release of a Redis decision releases its embedded twin.
   */
  private static final class BesideTheEmbeddedStore implements OracleRun.Target {
    private final Store redisStore;
    private final Store memoryStore;
    private final Engine redis;
    private final Engine memory;
    private final Map<String, String> twins = new HashMap<>();
    long differences;
    final List<String> first = new ArrayList<>();

    BesideTheEmbeddedStore(Store redisStore, Store memoryStore, ManualClock clock, Policy policy) {
      this.redisStore = redisStore;
      this.memoryStore = memoryStore;
      this.redis = engine(redisStore, clock, policy);
      this.memory = engine(memoryStore, clock, policy);
    }

    private static Engine engine(Store store, ManualClock clock, Policy policy) {
      return Engine.builder(store).clock(clock).callerTime(true).releaseHorizon(Duration.ofDays(7)).policy(policy)
          .build();
    }

    @Override
    public Decision decide(Message m, long time, boolean dryRun) {
      Decision expected = (dryRun ? memory.checkAt(m, time) : memory.decideAt(m, time)).join();
      Decision actual = (dryRun ? redis.checkAt(m, time) : redis.decideAt(m, time)).join();
      if (actual.decisionId() != null) {
        twins.put(actual.decisionId(), expected.decisionId());
      }
      boolean same = actual.allowed() == expected.allowed() && actual.deferred() == expected.deferred()
          && actual.replayed() == expected.replayed() && actual.sendAt() == expected.sendAt()
          && actual.retryAfterMs() == expected.retryAfterMs() && actual.blockedBy().equals(expected.blockedBy())
          && actual.shadowBlockedBy().equals(expected.shadowBlockedBy()) && actual.rules().equals(expected.rules());
      if (!same) {
        differ(m + " at " + time + ": Redis " + actual + ", embedded " + expected);
      }
      byte[] partition = dev.fcap.store.StoreContract.partitionOf(m.recipient());
      List<String> states = DifferentialTraffic.states(redisStore, partition);
      List<String> embedded = DifferentialTraffic.states(memoryStore, partition);
      if (!states.equals(embedded)) {
        differ(m + " at " + time + ": states on Redis " + states + ", embedded " + embedded);
      }
      return actual;
    }

    @Override
    public boolean release(String decisionId) {
      boolean expected = memory.release(twins.getOrDefault(decisionId, decisionId)).join();
      boolean actual = redis.release(decisionId).join();
      if (actual != expected) {
        differ("release of " + decisionId + ": Redis " + actual + ", embedded " + expected);
      }
      return actual;
    }

    private void differ(String what) {
      differences++;
      if (first.size() < 5) {
        first.add(what);
      }
    }

    @Override
    public void setPolicy(Policy policy) {
      redis.setPolicy(policy);
      memory.setPolicy(policy);
    }

    @Override
    public void reset(String tenant, String recipient) {
      redis.reset(tenant, recipient).join();
      memory.reset(tenant, recipient).join();
    }

    @Override
    public void close() {
      redis.close();
      memory.close();
    }
  }

  /** As on the embedded store: a counter holds at most 256 bookings, in a log and in a fixed window. */
  @Test
  void aCounterFullOfBookingsBooksNoMore() throws Exception {
    STANDALONE.deployment().flushAll();
    Rule perSecondWindow = new Rule("one-per-second-window", null, 1, Duration.ofSeconds(1),
        List.of(Dimension.RECIPIENT), null, null, Algorithm.FIXED_WINDOW, 0, Mode.ENFORCE, null);
    for (Rule rule : List.of(Rule.of("one-per-second", 1, Duration.ofSeconds(1), Dimension.RECIPIENT), perSecondWindow)) {
      ManualClock clock = new ManualClock(DeferralOracleProperties.START);
      long t0 = clock.millis();
      Engine engine = Engine.builder(RedisStore.builder(STANDALONE.uri()).clock(clock).build()).clock(clock)
          .policy(new Policy("default", 1, List.of(rule))).build();
      Message m = Message.builder(rule.id()).defer(Defer.until(Instant.ofEpochMilli(t0 + 3_600_000))).build();
      assertThat(engine.decide(m).join().allowed()).isTrue();
      Decision last = null;
      for (int i = 1; i <= 256; i++) {
        last = engine.decide(m).join();
        assertThat(last.sendAt()).as("%s: booking %d", rule.id(), i).isEqualTo(t0 + i * 1000L);
      }
      Decision full = engine.decide(m).join();
      assertThat(full.deferred()).as("%s: the 257th booking", rule.id()).isFalse();
      assertThat(full.blockedBy()).containsExactly(rule.id());
      assertThat(engine.release(last.decisionId()).join()).isTrue();
      assertThat(engine.decide(m).join().sendAt()).as("%s: the released slot again", rule.id()).isEqualTo(last.sendAt());
    }
  }

  /** As on the embedded store: a deferral books nothing for a suppressed recipient (the script reads the entry). */
  @Test
  void aDeferralForASuppressedRecipientBooksNothing() throws Exception {
    STANDALONE.deployment().flushAll();
    ManualClock clock = new ManualClock(DeferralOracleProperties.START);
    Engine engine = Engine.builder(RedisStore.builder(STANDALONE.uri()).clock(clock).build()).clock(clock)
        .policy(new Policy("default", 1, List.of(Rule.of("two-per-day", 2, Duration.ofDays(1), Dimension.RECIPIENT))))
        .build();
    var list = engine.suppressions().orElseThrow();
    list.put("default", new dev.fcap.model.Suppression("+2", List.of(), List.of(), "replied STOP", "ops",
        clock.millis(), dev.fcap.model.Suppression.NEVER));
    Decision d = engine.decide(Message.builder("+2").defer(Defer.BY_DEFAULT).build()).join();
    assertThat(d.deferred()).isFalse();
    assertThat(d.blockedBy()).containsExactly(dev.fcap.model.Suppression.BLOCKED_BY);
    assertThat(list.remove("default", "+2")).isTrue();
    assertThat(engine.decide(Message.builder("+2").build()).join().allowed()).isTrue();
    assertThat(engine.decide(Message.builder("+2").build()).join().allowed()).as("nothing was booked").isTrue();
    assertThat(engine.decide(Message.builder("+2").build()).join().blockedBy()).containsExactly("two-per-day");
  }

  /**
   * As on the embedded store: a retry of a booked message id answers the same booking, and its
   * release by message id gives the slot back, also for an id kept in the entries hash (the fifth of
   * a partition: four stay in the value).
   */
  @Test
  void aBookedMessageIdIsAnsweredAgainAndReleasedByItsId() throws Exception {
    STANDALONE.deployment().flushAll();
    ManualClock clock = new ManualClock(DeferralOracleProperties.START);
    long t0 = clock.millis();
    Engine engine = Engine.builder(RedisStore.builder(STANDALONE.uri()).clock(clock).build()).clock(clock)
        .callerTime(true).policy(new Policy("default", 1,
            List.of(Rule.of("two-per-minute", 2, Duration.ofMinutes(1), Dimension.RECIPIENT)))).build();
    assertThat(engine.decideAt(Message.builder("a").build(), t0).join().allowed()).isTrue();
    assertThat(engine.decideAt(Message.builder("a").build(), t0 + 10_000).join().allowed()).isTrue();
    long[] slots = {t0 + 60_000, t0 + 70_000, t0 + 120_000, t0 + 130_000, t0 + 180_000};
    Message[] m = new Message[slots.length];
    for (int i = 0; i < slots.length; i++) {
      m[i] = Message.builder("a").messageId("order-" + i).defer(Defer.until(Instant.ofEpochMilli(t0 + 3_600_000)))
          .build();
      Decision booked = engine.decideAt(m[i], t0 + 20_000 + i).join();
      assertThat(booked.deferred()).as("order-%d", i).isTrue();
      assertThat(booked.sendAt()).isEqualTo(slots[i]);
    }
    for (int i = 0; i < slots.length; i++) {
      Decision again = engine.decideAt(m[i], t0 + 30_000).join();
      assertThat(again.replayed()).as("order-%d", i).isTrue();
      assertThat(again.deferred()).isTrue();
      assertThat(again.sendAt()).isEqualTo(slots[i]);
    }
    assertThat(engine.releaseMessage(m[4]).join()).isTrue();
    assertThat(engine.releaseMessage(m[4]).join()).as("released once").isFalse();
    assertThat(engine.releaseMessage(m[1]).join()).isTrue();
    Message next = Message.builder("a").defer(Defer.until(Instant.ofEpochMilli(t0 + 3_600_000))).build();
    assertThat(engine.decideAt(next, t0 + 31_000).join().sendAt()).as("the slot order-1 gave back").isEqualTo(slots[1]);
    assertThat(engine.decideAt(next, t0 + 31_001).join().sendAt()).as("then order-4's").isEqualTo(slots[4]);
  }

  /**
   * The fullest window a refused message would join, on a log holding bookings, at the instant an
   * entry leaves it (the decision exactly one window after that entry): the entry counts in none of
   * them, on either store. The oracle compares verdicts and slots, not these counts.
   */
  @Test
  void aBookedLogCountsNoEntryAtTheInstantItLeaves() throws Exception {
    ManualClock clock = new ManualClock(DeferralOracleProperties.START);
    long t0 = clock.millis();
    Rule rule = Rule.of("two-per-minute", 2, Duration.ofMinutes(1), Dimension.RECIPIENT);
    onEachStore(rule, clock).forEach((store, engine) -> {
      Message plain = Message.builder("b").build();
      Message deferred = Message.builder("b").defer(Defer.until(Instant.ofEpochMilli(t0 + 3_600_000))).build();
      assertThat(engine.decideAt(plain, t0).join().allowed()).isTrue();
      assertThat(engine.decideAt(plain, t0 + 10_000).join().allowed()).isTrue();
      assertThat(engine.decideAt(deferred, t0 + 20_000).join().sendAt()).isEqualTo(t0 + 60_000);
      assertThat(engine.decideAt(deferred, t0 + 20_001).join().sendAt()).isEqualTo(t0 + 70_000);
      // at t0 + 60 s the entry of t0 has left: every window ending in [t0 + 60 s, t0 + 120 s) holds 2
      Decision refused = engine.decideAt(plain, t0 + 60_000).join();
      assertThat(refused.allowed()).isFalse();
      assertThat(refused.rules().get(0).used()).as(store).isEqualTo(2);
      assertThat(refused.retryAfterMs()).isEqualTo(60_000);
    });
  }

  /**
   * The message's windows end in [x, x + W): a message booked at x + W, a window after the decision
   * x, is in none of them. With the booking between released, the windows of the message hold
   * nothing, on either store.
   */
  @Test
  void aBookingOneWindowAfterTheDecisionCountsInNoneOfItsWindows() throws Exception {
    ManualClock clock = new ManualClock(DeferralOracleProperties.START);
    long t0 = clock.millis();
    Rule rule = Rule.of("one-per-minute", 1, Duration.ofMinutes(1), Dimension.RECIPIENT);
    onEachStore(rule, clock).forEach((store, engine) -> {
      Message plain = Message.builder("c").build();
      Message deferred = Message.builder("c").defer(Defer.until(Instant.ofEpochMilli(t0 + 3_600_000))).build();
      assertThat(engine.decideAt(plain, t0).join().allowed()).isTrue();
      Decision first = engine.decideAt(deferred, t0 + 1).join();
      assertThat(first.sendAt()).isEqualTo(t0 + 60_000);
      assertThat(engine.decideAt(deferred, t0 + 2).join().sendAt()).isEqualTo(t0 + 120_000);
      assertThat(engine.release(first.decisionId()).join()).isTrue();
      Decision admitted = engine.decideAt(plain, t0 + 60_000).join();
      assertThat(admitted.allowed()).isTrue();
      assertThat(admitted.rules().get(0).used()).as(store).isZero();
    });
  }

  /** An engine of {@code rule} alone on each store, by its name: a MemoryStore, then the Redis (flushed). */
  private static Map<String, Engine> onEachStore(Rule rule, ManualClock clock) throws Exception {
    STANDALONE.deployment().flushAll();
    Policy policy = new Policy("default", 1, List.of(rule));
    Map<String, Engine> engines = new LinkedHashMap<>();
    for (Store store : List.of(MemoryStore.builder().clock(clock).build(),
        RedisStore.builder(STANDALONE.uri()).clock(clock).build())) {
      engines.put(store.getClass().getSimpleName(),
          Engine.builder(store).clock(clock).callerTime(true).policy(policy).build());
    }
    return engines;
  }

  private static void check(String uri, long seed, int groups) {
    SplittableRandom random = new SplittableRandom(seed);
    check(uri, seed, groups, DeferralOracleProperties.randomPolicy(random), random, true);
  }

  private static void check(String uri, long seed, int groups, Policy policy, SplittableRandom random,
      boolean freeClock) {
    ManualClock clock = new ManualClock(DeferralOracleProperties.START);
    Engine engine = Engine.builder(RedisStore.builder(uri).clock(clock).groups(groups).build())
        .clock(clock).callerTime(true).releaseHorizon(Duration.ofDays(7)).policy(policy).build();
    var run = new DeferralOracleProperties.Run(seed, policy, OracleRun.engine(engine), Duration.ofDays(7).toMillis(),
        freeClock);
    run.steps(random, STEPS);
    assertThat(run.over).as("seed %d: %s", seed, run.first).isZero();
    assertThat(run.mismatches).as("seed %d: %s", seed, run.first).isZero();
    assertThat(run.deferred).as("seed %d: bookings", seed).isPositive();
  }
}
