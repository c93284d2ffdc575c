package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.redis.testing.RedisExtension;
import dev.fcap.store.redis.testing.RedisServer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Message ids and release records live in the partition value while it holds fewer than four, then in
 * the partition's entries hash (docs/redis.md, "Message ids"): a shared partition that admits
 * thousands of decisions, each writing a release record (as the engine does in every partition of a
 * decision), keeps a value of constant size while its hash grows by one field per decision; once the
 * records' horizon has passed, further traffic keeps the expired fields bounded (two sampled per
 * write); a release and a message-id retry are answered from the value or the hash; a reset deletes
 * the value and the hash together.
 *
 * <p>Before the hash, the value grew by about 70 bytes per admitted decision and every call parsed and
 * copied all of them (O(admitted decisions) per decision): the first assertion on {@code STRLEN} failed.
 */
class RedisEntriesIT {
  private static final long HORIZON_MS = 60_000;
  private static final int DECISIONS = 2_000;
  /** Entries kept in the value before the hash (partition.lua, INLINE_MAX). */
  private static final int INLINE = 4;
  private static final long STEP_MS = 10;
  private static final byte[] TAIL = new byte[41]; // the seed policy's tail length; opaque to the store

  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  private RedisServer server;
  private final ManualClock clock = new ManualClock();
  private final SplittableRandom random = new SplittableRandom(7);

  @BeforeEach
  void flush() throws Exception {
    REDIS.deployment().flushAll();
    server = REDIS.deployment().servers().get(0);
  }

  /** A channel-wide cap: a large sliding log (10^6 per 10 min), general path. */
  private static final CounterRequest CHANNEL = new CounterRequest(bytes("channel-cap"),
      CounterSpec.single(Algorithm.SLIDING_LOG, 1_000_000, 600_000, true, 0), 0);
  /** A small log, 20 per 100 ms (at most 10 held at one decision per 10 ms): the fast path. */
  private static final CounterRequest BURST = new CounterRequest(bytes("burst"),
      CounterSpec.single(Algorithm.SLIDING_LOG, 20, 100, true, 0), 0);

  private static final byte[] SHARED = bytes("s-channel");
  private static final byte[] SMALL = bytes("s-burst");

  @Test
  void recordsLiveInTheEntriesHashAndTheValueStaysTheSameSize() throws Exception {
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).build()) {
      String sharedKey = new String(store.keyOf(SHARED), StandardCharsets.ISO_8859_1);
      String smallKey = new String(store.keyOf(SMALL), StandardCharsets.ISO_8859_1);
      List<byte[]> records = new ArrayList<>();
      long[] firstSizes = null;
      for (int i = 0; i < DECISIONS; i++) {
        byte[] record = randomKey();
        records.add(record);
        assertThat(decide(store, SHARED, CHANNEL, record(record)).allowed()).isTrue();
        assertThat(decide(store, SMALL, BURST, record(record)).allowed()).isTrue();
        if (i == 99) {
          firstSizes = new long[] {strlen(sharedKey), strlen(smallKey)};
        }
        clock.advance(STEP_MS);
      }
      assertThat(strlen(sharedKey)).as("the shared partition's value after %d records", DECISIONS)
          .isLessThan(500).isBetween(firstSizes[0] - 2, firstSizes[0] + 2);
      assertThat(strlen(smallKey)).as("the small partition's value").isLessThan(500)
          .isBetween(firstSizes[1] - 2, firstSizes[1] + 2);
      assertThat(hlen(sharedKey)).isEqualTo(DECISIONS - INLINE);
      assertThat(hlen(smallKey)).isEqualTo(DECISIONS - INLINE);
      // the hash lives as long as its longest-lived entry: the horizon plus a second of slack
      assertThat((Long) server.call("PTTL", sharedKey + "\0M")).isBetween(HORIZON_MS - 1_000, HORIZON_MS + 2_000);

      // a release is found in the hash, gives back once, and forgets the record (a recent one: a large
      // log gives nothing back for an event with more than 256 after it, docs/redis.md)
      byte[] recent = records.get(DECISIONS - 10);
      assertThat(check(store, SHARED, CHANNEL).used()[0]).isEqualTo(DECISIONS);
      assertThat(release(store, SHARED, CHANNEL, recent).allowed()).as("released").isTrue();
      assertThat(release(store, SHARED, CHANNEL, recent).allowed()).as("released twice").isFalse();
      assertThat(check(store, SHARED, CHANNEL).used()[0]).isEqualTo(DECISIONS - 1);
      assertThat(hlen(sharedKey)).isEqualTo(DECISIONS - INLINE - 1);

      // a message id's retry is answered from the hash, and counts nothing
      Idempotency messageId = new Idempotency(randomKey(), HORIZON_MS, TAIL, true);
      PartitionResult first = decide(store, SHARED, CHANNEL, messageId);
      assertThat(first.replayOf()).isNull();
      clock.advance(STEP_MS);
      PartitionResult retry = decide(store, SHARED, CHANNEL, messageId);
      assertThat(retry.replayOf()).as("a retry of a remembered message id").isNotNull();
      assertThat(retry.time()).isEqualTo(first.time());
      assertThat(check(store, SHARED, CHANNEL).used()[0]).isEqualTo(DECISIONS);

      // the horizon passes; as traffic goes on, two sampled fields per write delete expired ones, so
      // the expired records stay well below the live ones (about a tenth here; none deleted: all 2,000)
      clock.advance(HORIZON_MS + 1_000);
      for (int i = 0; i < DECISIONS; i++) {
        assertThat(decide(store, SHARED, CHANNEL, record(randomKey())).allowed()).isTrue();
        clock.advance(STEP_MS);
      }
      assertThat(hlen(sharedKey)).as("live records plus the expired ones not yet sampled")
          .isBetween((long) DECISIONS - INLINE, DECISIONS * 3L / 2);
      assertThat(strlen(sharedKey)).isBetween(firstSizes[0] - 2, firstSizes[0] + 2);
      // an expired record is not released, even while its field is still there
      assertThat(release(store, SHARED, CHANNEL, records.get(1)).allowed()).isFalse();
    }
  }

  @Test
  void aPartitionsFirstEntriesStayInItsValueAndTheRestGoToTheHash() throws Exception {
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).build()) {
      String key = new String(store.keyOf(SMALL), StandardCharsets.ISO_8859_1);
      Idempotency messageId = new Idempotency(randomKey(), HORIZON_MS, TAIL, true);
      PartitionResult first = decide(store, SMALL, BURST, messageId);
      List<byte[]> records = new ArrayList<>();
      for (int i = 0; i < INLINE + 1; i++) {
        clock.advance(STEP_MS);
        records.add(randomKey());
        assertThat(decide(store, SMALL, BURST, record(records.get(i))).allowed()).isTrue();
      }
      // a partition's first entries cost no second key; the rest spill, and the value says so
      assertThat(StoredValue.all(REDIS.uri()).get(key).counters()).extracting(StoredValue.Counter::kind)
          .containsExactly(StoredValue.GAPS, StoredValue.ENTRY, StoredValue.ENTRY, StoredValue.ENTRY,
              StoredValue.ENTRY, StoredValue.SPILLED);
      assertThat(hlen(key)).isEqualTo(2);
      // a retry is answered from the value, a later record is released from the hash, an earlier
      // one from the value: each once
      assertThat(decide(store, SMALL, BURST, messageId).replayOf()).isNotNull();
      assertThat(decide(store, SMALL, BURST, messageId).time()).isEqualTo(first.time());
      assertThat(release(store, SMALL, BURST, records.get(INLINE)).allowed()).isTrue();
      assertThat(release(store, SMALL, BURST, records.get(INLINE)).allowed()).isFalse();
      assertThat(hlen(key)).isEqualTo(1);
      assertThat(release(store, SMALL, BURST, records.get(0)).allowed()).isTrue();
      assertThat(release(store, SMALL, BURST, records.get(0)).allowed()).isFalse();
      assertThat(StoredValue.allEntries(REDIS.uri()).get(key)).hasSize(INLINE);
      assertThat(check(store, SMALL, BURST).used()[0]).isEqualTo(1 + INLINE + 1 - 2);
      // with room in the value again, the next entry goes there, and the hashed one is still found
      clock.advance(STEP_MS);
      byte[] next = randomKey();
      assertThat(decide(store, SMALL, BURST, record(next)).allowed()).isTrue();
      assertThat(hlen(key)).isEqualTo(1);
      assertThat(release(store, SMALL, BURST, records.get(INLINE - 1)).allowed()).isTrue();
      assertThat(release(store, SMALL, BURST, next).allowed()).isTrue();
    }
  }

  @Test
  void aResetDeletesTheValueAndItsEntriesTogether() throws Exception {
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).build()) {
      String key = new String(store.keyOf(SHARED), StandardCharsets.ISO_8859_1);
      List<byte[]> before = new ArrayList<>();
      for (int i = 0; i <= INLINE; i++) { // the first in the value, the last in the hash
        before.add(randomKey());
        assertThat(decide(store, SHARED, CHANNEL, record(before.get(i))).allowed()).isTrue();
      }
      assertThat((Long) server.call("EXISTS", key, key + "\0M")).isEqualTo(2L);
      assertThat(store.delete(SHARED).join()).isTrue();
      assertThat((Long) server.call("EXISTS", key, key + "\0M")).as("value and hash deleted").isZero();
      assertThat(store.delete(SHARED).join()).isFalse();
      // releasing a decision made before the reset must not give back what was counted after it
      clock.advance(STEP_MS);
      assertThat(decide(store, SHARED, CHANNEL, record(randomKey())).allowed()).isTrue();
      for (byte[] record : before) {
        assertThat(release(store, SHARED, CHANNEL, record).allowed()).isFalse();
      }
      assertThat(check(store, SHARED, CHANNEL).used()[0]).isEqualTo(1);
    }
  }

  private PartitionResult decide(RedisStore store, byte[] partition, CounterRequest counter, Idempotency id) {
    return store.apply(PartitionRequest.of(partition, Operation.DECIDE, PartitionRequest.STORE_TIME, 1,
        List.of(counter)).withIdempotency(id)).join();
  }

  private PartitionResult check(RedisStore store, byte[] partition, CounterRequest counter) {
    return store.apply(PartitionRequest.of(partition, Operation.CHECK, PartitionRequest.STORE_TIME, 1,
        List.of(counter))).join();
  }

  /** A release by record key: the time to undo at is the one the record remembers. */
  private PartitionResult release(RedisStore store, byte[] partition, CounterRequest counter, byte[] record) {
    return store.apply(PartitionRequest.of(partition, Operation.DECIDE, PartitionRequest.STORE_TIME, 1,
        List.of(counter)).withIdempotency(record(record)).asRelease(0)).join();
  }

  /** A release record as the engine writes one for a decision without a message id. */
  private static Idempotency record(byte[] key) {
    return new Idempotency(key, HORIZON_MS, TAIL, false);
  }

  private byte[] randomKey() {
    byte[] key = new byte[16];
    random.nextBytes(key);
    return key;
  }

  private long strlen(String key) throws Exception {
    return (Long) server.call("STRLEN", key);
  }

  private long hlen(String key) throws Exception {
    return (Long) server.call("HLEN", key + "\0M");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
