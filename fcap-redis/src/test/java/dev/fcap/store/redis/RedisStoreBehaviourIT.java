package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.ManualClock;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.SeedRules;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import dev.fcap.store.redis.testing.RedisExtension;
import dev.fcap.store.redis.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Script loading, typed failures, the key layout and TTLs on a real standalone Redis. */
class RedisStoreBehaviourIT {
  /**
   * These tests count keys and entries of the counters' layout: without release records and the
   * decision-id key (those are StoreContract's and RedisDifferentialIT's).
   */
  private static final java.time.Duration NO_RELEASE_RECORDS = java.time.Duration.ZERO;

  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  private static final Policy SEED = SeedRules.POLICY;

  private RedisServer server;

  @BeforeEach
  void flush() throws Exception {
    REDIS.deployment().flushAll();
    server = REDIS.deployment().servers().get(0);
  }

  private static StoreException storeFailure(CompletableFuture<?> f) {
    try {
      f.join();
    } catch (CompletionException e) {
      assertThat(e.getCause()).isInstanceOf(StoreException.class);
      return (StoreException) e.getCause();
    }
    throw new AssertionError("expected a StoreException");
  }

  /**
   * A store that holds its connection's writes ({@code flushDelay}) still decides every call exactly:
   * 8 threads deciding one by one on 4 recipients of limit 30 admit 30 each, and every call answers.
   */
  @Test
  void aStoreThatGathersCallsDecidesEachExactly() throws Exception {
    Policy policy = new Policy("default", 1, List.of(Rule.of("thirty", 30, Duration.ofDays(1), Dimension.RECIPIENT)));
    try (RedisStore store = RedisStore.builder(REDIS.uri()).flushDelay(Duration.ofMillis(2)).build()) {
      Engine engine = Engine.builder(store).policy(policy).build();
      java.util.concurrent.atomic.AtomicIntegerArray admitted = new java.util.concurrent.atomic.AtomicIntegerArray(4);
      java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(8);
      try {
        List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
        for (int t = 0; t < 8; t++) {
          done.add(threads.submit(() -> {
            for (int i = 0; i < 25; i++) {
              int r = i % 4;
              if (engine.decide(Message.builder("gather-" + r).build()).join().allowed()) {
                admitted.incrementAndGet(r);
              }
            }
            return null;
          }));
        }
        for (java.util.concurrent.Future<?> f : done) {
          f.get(60, java.util.concurrent.TimeUnit.SECONDS);
        }
      } finally {
        threads.shutdownNow();
      }
      for (int r = 0; r < 4; r++) {
        assertThat(admitted.get(r)).as("recipient %d", r).isEqualTo(30);
      }
    }
    assertThatThrownBy(() -> RedisStore.builder(REDIS.uri()).flushDelay(Duration.ofMillis(11)))
        .hasMessage("flushDelay must be from 0 to 10ms, got PT0.011S");
  }

  @Test
  void recoversFromScriptFlushByItself() throws Exception {
    try (RedisStore store = RedisStore.connect(REDIS.uri())) {
      Engine engine = Engine.builder(store).releaseHorizon(NO_RELEASE_RECORDS).policy(SEED).build();
      assertThat(engine.decide(Message.builder("a").content("x").build()).join().allowed()).isTrue();
      server.call("SCRIPT", "FLUSH");
      Decision d = engine.decide(Message.builder("a").content("x").build()).join();
      assertThat(d.allowed()).isTrue();
      assertThat(d.rules().get(0).used()).as("the first decision survived the flush").isEqualTo(1);
      assertThat(engine.decide(Message.builder("a").content("x").build()).join().blockedBy())
          .containsExactly("same-content-per-59s");
    }
  }

  @Test
  void theSeedPolicyIsOneKeyWithATtlOfItsLongestWindow() throws Exception {
    try (RedisStore store = RedisStore.connect(REDIS.uri())) {
      server.call("CONFIG", "RESETSTAT"); // after build(), whose warm-up READs are EVALSHAs too
      Engine engine = Engine.builder(store).releaseHorizon(NO_RELEASE_RECORDS).policy(SEED).build();
      for (int i = 0; i < 3; i++) {
        engine.decide(Message.builder("+15550001").content("c" + i).build()).join();
      }
      assertThat(server.call("DBSIZE")).as("the partition and the store's identity key").isEqualTo(2L);
      long ttl = (Long) server.call("PTTL", "fc:{r\u0007default+15550001}");
      assertThat(ttl).isBetween(86_390_000L, 86_402_000L);
      String commands = (String) server.call("INFO", "commandstats");
      assertThat(commands).contains("cmdstat_evalsha:calls=3,");
    }
  }

  /**
   * A request's own time (a replay's row) says nothing of real time: a replay can take longer in real
   * time than a window lasts in log time, so a TTL counted from the row's time lost counters later
   * rows still needed. Such keys live at least a day; the store's own clocks keep exact TTLs.
   */
  @Test
  void keysWrittenAtARequestsOwnTimeOutliveTheirWindowInRealTime() throws Exception {
    Policy oneSecond = new Policy("default", 1, List.of(Rule.of("per-second", 1, Duration.ofSeconds(1),
        Dimension.RECIPIENT)));
    long longAgo = 1_600_000_000_000L; // 2020: a replay of an old log
    try (RedisStore store = RedisStore.connect(REDIS.uri())) {
      Engine engine = Engine.builder(store).releaseHorizon(NO_RELEASE_RECORDS).callerTime(true).policy(oneSecond).build();
      assertThat(engine.decideAt(Message.builder("old").build(), longAgo).join().allowed()).isTrue();
      assertThat(engine.decide(Message.builder("live").build()).join().allowed()).isTrue();
    }
    long own = (Long) server.call("PTTL", "fc:{r\u0007defaultold}");
    assertThat(own).isBetween(86_400_000L - 60_000L, 86_400_000L);
    // the window (1 s, its expiry rounded up to a whole second) plus a second of slack
    long live = (Long) server.call("PTTL", "fc:{r\u0007defaultlive}");
    assertThat(live).isBetween(1L, 3_000L);
    ManualClock clock = new ManualClock();
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).build()) {
      Engine engine = Engine.builder(store).releaseHorizon(NO_RELEASE_RECORDS).policy(oneSecond).build();
      assertThat(engine.decide(Message.builder("injected").build()).join().allowed()).isTrue();
    }
    assertThat((Long) server.call("PTTL", "fc:{r\u0007defaultinjected}")).as("an injected clock is real time")
        .isBetween(1L, 3_000L);
  }

  /**
   * The value layout of docs/redis.md, byte by byte: the seed policy's two logs in gap form, and
   * READ translating them back to fcap-core's SlidingLog layout.
   */
  @Test
  void slidingLogsAreStoredInGapFormAndReadBackCanonical() throws Exception {
    long t0 = 1_800_000_000_123L;
    long[] times = {t0, t0 + 100, t0 + 70_000};
    try (RedisStore store = RedisStore.connect(REDIS.uri())) {
      Engine engine = Engine.builder(store).releaseHorizon(NO_RELEASE_RECORDS).callerTime(true).policy(SEED).build();
      for (long t : times) {
        assertThat(engine.decideAt(Message.builder("+15550001").content("same").build(), t).join().allowed()).isTrue();
      }
      StoredValue value = StoredValue.all(REDIS.uri()).get("fc:{r\u0007default+15550001}");
      assertThat(value.latest()).as("the partition's time: its latest write").isEqualTo(times[2]);
      assertThat(value.counters()).hasSize(2);
      StoredValue.Counter recipient = value.counters().get(0);
      assertThat(recipient.id()).hasSize(8); // the group id: recipient rules, no other dimension
      assertThat(recipient.kind()).isEqualTo(StoredValue.GAPS);
      long expiresMs = times[2] + 86_400_000L;
      assertThat(recipient.expires()).isEqualTo((int) -Math.floorDiv(1_577_836_800_000L - expiresMs, 1000L));
      long d = 1_577_836_800_000L + recipient.expires() * 1000L - times[2];
      // d:u32, then the gaps 69,900 ms (3 bytes: 10 + 22 bits) and 100 ms (2 bytes: 01 + 14 bits)
      assertThat(recipient.state()).containsExactly((byte) (d >>> 24), (byte) (d >>> 16), (byte) (d >>> 8), (byte) d,
          (byte) 0x81, (byte) 0x11, (byte) 0x0c, (byte) 0x40, (byte) 0x64);
      assertThat(StoredValue.gapTimes(recipient.state(), recipient.expires())).containsExactly(times[2], times[1], times[0]);
      StoredValue.Counter content = value.counters().get(1);
      assertThat(content.id()).hasSize(8 + 16); // the group id, then the content fingerprint
      assertThat(content.kind()).isEqualTo(StoredValue.GAPS);
      assertThat(StoredValue.gapTimes(content.state(), content.expires())).containsExactly(times[2], times[1], times[0]);

      byte[] partition = ("r\u0007default+15550001").getBytes(java.nio.charset.StandardCharsets.UTF_8);
      var snapshot = store.read(partition).join();
      assertThat(snapshot.counters()).hasSize(2);
      assertThat(snapshot.counters().get(0).algorithm()).isEqualTo(dev.fcap.model.Algorithm.SLIDING_LOG);
      java.nio.ByteBuffer canonical = java.nio.ByteBuffer.allocate(9 + 12).put((byte) 0).putLong(times[2])
          .putInt(0).putInt(69_900).putInt(70_000);
      assertThat(snapshot.counters().get(0).state()).containsExactly(canonical.array());
    }
  }

  @Test
  void idleRecipientsCostNothing() throws Exception {
    ManualClock clock = new ManualClock();
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).build()) {
      Policy shortWindow = new Policy("default", 1, List.of(Rule.of("r", 2, Duration.ofMillis(300), Dimension.RECIPIENT)));
      Engine engine = Engine.builder(store).releaseHorizon(NO_RELEASE_RECORDS).clock(clock).policy(shortWindow).build();
      engine.decide(Message.builder("idle").build()).join();
      assertThat(server.call("DBSIZE")).as("the partition and the store's identity key").isEqualTo(2L);
      // expiry seconds are rounded up, plus 1 s of TTL slack: the key lives at most ~2.3 s
      dev.fcap.store.redis.testing.RedisDeployment.awaitCondition(
          () -> Long.valueOf(1).equals(server.call("DBSIZE")), "the idle key to expire");
      assertThat(server.call("EXISTS", "fc:identity")).as("only the identity key, one per store, stays").isEqualTo(1L);
    }
  }

  @Test
  void aScriptErrorIsTypedAndWritesNothing() throws Exception {
    try (RedisStore store = RedisStore.connect(REDIS.uri())) {
      Engine engine = Engine.builder(store).releaseHorizon(NO_RELEASE_RECORDS).policy(SEED).build();
      server.call("RPUSH", "fc:{r\u0007defaultwrong}", "not a partition");
      StoreException e = storeFailure(engine.decide(Message.builder("wrong").content("x").build()));
      assertThat(e.reason()).isEqualTo(Reason.ERROR);
      assertThat(e).hasMessageContaining("WRONGTYPE");
      assertThat(server.call("TYPE", "fc:{r\u0007defaultwrong}")).isEqualTo("list");
      assertThat(server.call("DBSIZE")).as("the list and the store's identity key").isEqualTo(2L);
    }
  }

  @Test
  void aStalledRedisIsATimeout() throws Exception {
    try (RedisStore store = RedisStore.builder(REDIS.uri()).commandTimeout(Duration.ofMillis(200)).build()) {
      Engine engine = Engine.builder(store).releaseHorizon(NO_RELEASE_RECORDS).policy(SEED).build();
      server.call("CLIENT", "PAUSE", "1500", "ALL");
      StoreException e = storeFailure(engine.decide(Message.builder("slow").content("x").build()));
      assertThat(e.reason()).isEqualTo(Reason.TIMEOUT);
      server.call("CLIENT", "UNPAUSE");
    }
  }

  @Test
  void nothingListeningIsUnavailableAtBuild() throws Exception {
    int port = RedisServer.freePort(false);
    assertThatThrownBy(() -> RedisStore.builder("redis://127.0.0.1:" + port).connectTimeout(Duration.ofMillis(500)).build())
        .isInstanceOfSatisfying(StoreException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNAVAILABLE));
  }

  @Test
  void timesTheScriptCannotHoldExactlyAreRefused() {
    try (RedisStore store = RedisStore.connect(REDIS.uri())) {
      Engine engine = Engine.builder(store).releaseHorizon(NO_RELEASE_RECORDS).callerTime(true).policy(SEED).build();
      StoreException e = storeFailure(engine.decideAt(Message.builder("t").build(), RedisRequests.MAX_TIME_MS));
      assertThat(e.reason()).isEqualTo(Reason.ERROR);
      assertThat(e).hasMessageContaining("2^53");
      assertThat(engine.decideAt(Message.builder("t").build(), RedisRequests.MAX_TIME_MS - 1).join().allowed()).isTrue();
    }
  }

  @Test
  void redisTimeIsTheDefaultClock() throws Exception {
    try (RedisStore store = RedisStore.connect(REDIS.uri())) {
      var result = store.apply(PartitionRequest.of(new byte[] {'r', 1, 'x', 'y'}, dev.fcap.store.Operation.CHECK,
          PartitionRequest.STORE_TIME, 1, List.of())).join();
      @SuppressWarnings("unchecked")
      List<String> time = (List<String>) server.call("TIME");
      long redisMs = Long.parseLong(time.get(0)) * 1000;
      assertThat(result.time()).isBetween(redisMs - 5_000, redisMs + 5_000);
      assertThat(store.now()).isBetween(redisMs - 5_000, redisMs + 5_000);
    }
  }
}
