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
import dev.fcap.store.StoreException;
import dev.fcap.store.redis.testing.RedisExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The grouped layout's own mechanics on a real standalone Redis (docs/redis.md, "Several partitions
 * per key"): every partition a field of its group's hash, the hash's TTL, the sweep of dead fields,
 * a field's expiry that never drops counts, delete, and the layout marker. (Its decisions are
 * RedisDifferentialIT's, RedisOracleIT's and RedisStoreGroupedContractIT's.)
 */
class RedisGroupedLayoutIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  /** The one group of a store with {@code groups(1)}. */
  private static final byte[] GROUP = "fc:{g0}G".getBytes(StandardCharsets.US_ASCII);

  private RedisClient client;
  private RedisCommands<byte[], byte[]> redis;

  @BeforeEach
  void connect() throws Exception {
    REDIS.deployment().flushAll();
    client = RedisClient.create(RedisURI.create(REDIS.uri()));
    StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE);
    redis = c.sync();
  }

  @AfterEach
  void close() {
    client.shutdown();
  }

  private static Policy policy(int limit, Duration window) {
    return new Policy("default", 1, List.of(Rule.of("r", limit, window, Dimension.RECIPIENT)));
  }

  private static Engine engine(RedisStore store, ManualClock clock, Policy policy) {
    return Engine.builder(store).releaseHorizon(Duration.ZERO).clock(clock).policy(policy).build();
  }

  private static Decision decide(Engine engine, String recipient) {
    return engine.decide(Message.builder(recipient).build()).join();
  }

  /** The engine's partition key of a recipient of the default tenant (its field in the group). */
  private static byte[] partition(String recipient) {
    return ("r\u0007default" + recipient).getBytes(StandardCharsets.ISO_8859_1);
  }

  /** A field's real-time expiry (epoch ms): its value's first four bytes, seconds from 2020. */
  private long expiryOf(String recipient) {
    return 1_577_836_800_000L + ByteBuffer.wrap(redis.hget(GROUP, partition(recipient))).getInt() * 1000L;
  }

  /** Sets a field's real-time expiry to a second in the past, as if its own key had expired. */
  private void killField(String recipient) {
    byte[] value = redis.hget(GROUP, partition(recipient));
    ByteBuffer.wrap(value).putInt(1); // 2020-01-01T00:00:01Z
    redis.hset(GROUP, partition(recipient), value);
  }

  private Set<String> fields() {
    Set<String> names = new TreeSet<>();
    redis.hkeys(GROUP).forEach(f -> names.add(new String(f, StandardCharsets.ISO_8859_1).substring(9)));
    return names;
  }

  @Test
  void everyPartitionIsAFieldOfItsGroupUnderATtl() {
    ManualClock clock = new ManualClock();
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).groups(1).build()) {
      Engine engine = engine(store, clock, policy(2, Duration.ofHours(1)));
      for (int i = 0; i < 20; i++) {
        assertThat(decide(engine, "p" + i).allowed()).isTrue();
      }
      assertThat(redis.dbsize()).as("the group, the layout marker and the store's identity").isEqualTo(3);
      assertThat(redis.hlen(GROUP)).isEqualTo(20);
      assertThat(new String(redis.get("fc:layout".getBytes(StandardCharsets.US_ASCII)), StandardCharsets.US_ASCII))
          .isEqualTo("groups=1");
      long ttl = redis.pttl(GROUP);
      assertThat(ttl).as("an hour's window, plus the slack").isBetween(3_600_000L - 10_000, 3_602_000L);
      assertThat(redis.ttl("fc:layout".getBytes(StandardCharsets.US_ASCII))).as("the marker lives on").isEqualTo(-1);
    }
  }

  @Test
  void theGroupsTtlCoversItsLongestLivedField() {
    ManualClock clock = new ManualClock();
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).groups(1).build()) {
      decide(engine(store, clock, policy(5, Duration.ofHours(2))), "long");
      decide(engine(store, clock, policy(5, Duration.ofMillis(300))), "short");
      assertThat(redis.pttl(GROUP)).as("not shortened by the short field").isGreaterThan(7_000_000L);
      long now = System.currentTimeMillis();
      assertThat(expiryOf("short")).as("the short field's own expiry: 300 ms, rounded up, plus the slack")
          .isBetween(now - 5_000, now + 5_000);
      assertThat(expiryOf("long")).isGreaterThan(now + 7_000_000L);
      decide(engine(store, clock, policy(5, Duration.ofHours(3))), "longer");
      assertThat(redis.pttl(GROUP)).as("pushed out by a longer one").isGreaterThan(10_000_000L);
    }
  }

  @Test
  void deadFieldsAreSweptByWritesAndLiveOnesKept() {
    ManualClock clock = new ManualClock();
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).groups(1).build()) {
      Engine engine = engine(store, clock, policy(1000, Duration.ofHours(1)));
      for (int i = 0; i < 20; i++) {
        decide(engine, "p" + i);
      }
      for (int i = 0; i < 10; i++) {
        killField("p" + i);
      }
      // each write samples two fields: the ten dead ones go within a few hundred writes (the chance
      // that one is still there after 400 is below 10^-17), and no live one ever does
      for (int n = 0; n < 400 && redis.hlen(GROUP) > 10; n++) {
        assertThat(decide(engine, "p19").allowed()).isTrue();
      }
      Set<String> live = new TreeSet<>();
      for (int i = 10; i < 20; i++) {
        live.add("p" + i);
      }
      assertThat(fields()).isEqualTo(live);
      // (used: what the window held before this decision)
      assertThat(decide(engine, "p10").rules().get(0).used()).as("a live field's count is intact").isEqualTo(1);
      assertThat(decide(engine, "p0").rules().get(0).used()).as("a swept field starts again").isEqualTo(0);
    }
  }

  @Test
  void aFieldPastItsRealTimeExpiryIsStillReadWithItsCounts() {
    // its expiry only reclaims memory; the counts carry their own expiry in the decision's clock,
    // which here (a caller's clock) has not passed: dropping them would over-admit
    ManualClock clock = new ManualClock();
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).groups(1).build()) {
      Engine engine = engine(store, clock, policy(2, Duration.ofHours(1)));
      decide(engine, "a");
      decide(engine, "a");
      killField("a");
      Decision third = decide(engine, "a");
      assertThat(third.allowed()).isFalse();
      assertThat(third.blockedBy()).containsExactly("r");
      clock.advance(Duration.ofHours(1).toMillis());
      assertThat(decide(engine, "a").allowed()).as("once the window has passed in the decision's clock").isTrue();
    }
  }

  @Test
  void deleteForgetsOneFieldAndNothingElse() {
    ManualClock clock = new ManualClock();
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).groups(1).build()) {
      Engine engine = engine(store, clock, policy(1, Duration.ofHours(1)));
      decide(engine, "a");
      decide(engine, "b");
      assertThat(store.delete(partition("a")).join()).isTrue();
      assertThat(store.delete(partition("a")).join()).as("nothing left to delete").isFalse();
      assertThat(store.delete(partition("never")).join()).isFalse();
      assertThat(decide(engine, "a").allowed()).as("a starts again").isTrue();
      assertThat(decide(engine, "b").allowed()).as("b keeps its count").isFalse();
      killField("b");
      assertThat(store.delete(partition("b")).join()).as("a dead field goes, but was not live").isFalse();
      assertThat(fields()).containsExactly("a");
    }
  }

  @Test
  void aStoreOfAnotherLayoutRefusesToStartAndChangesNothing() {
    ManualClock clock = new ManualClock();
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).groups(4).build()) {
      decide(engine(store, clock, policy(1, Duration.ofHours(1))), "a");
    }
    long keys = redis.dbsize();
    assertThatThrownBy(() -> RedisStore.builder(REDIS.uri()).clock(clock).build())
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("layout 'groups=4'").hasMessageContaining("configured for 'keys'")
        .hasMessageContaining("fc:layout");
    assertThatThrownBy(() -> RedisStore.builder(REDIS.uri()).clock(clock).groups(8).build())
        .isInstanceOf(StoreException.class).hasMessageContaining("configured for 'groups=8'");
    assertThat(redis.dbsize()).isEqualTo(keys);
    assertThat(new String(redis.get("fc:layout".getBytes(StandardCharsets.US_ASCII)), StandardCharsets.US_ASCII))
        .isEqualTo("groups=4");
    // the same layout starts, and reads what was written
    try (RedisStore again = RedisStore.builder(REDIS.uri()).clock(clock).groups(4).build()) {
      assertThat(decide(engine(again, clock, policy(1, Duration.ofHours(1))), "a").allowed()).isFalse();
    }
    // another prefix is another namespace, with a layout of its own; a key per partition leaves no marker
    try (RedisStore other = RedisStore.builder(REDIS.uri()).clock(clock).keyPrefix("other:").build()) {
      assertThat(decide(engine(other, clock, policy(1, Duration.ofHours(1))), "a").allowed()).isTrue();
    }
    assertThat(redis.exists("other:layout".getBytes(StandardCharsets.US_ASCII))).isZero();
  }
}
