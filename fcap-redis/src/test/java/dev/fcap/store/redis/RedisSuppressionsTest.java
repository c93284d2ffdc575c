package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Suppression;
import dev.fcap.store.SuppressionList;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The suppression layout without Redis: a recipient's bucket lies in its partition's slot in every
 * layout, a decision's scope names the bucket, the recipient's filter bits and the recipient, and the compact entry reads back
 * whole (at least 9 bytes, so never taken for an incarnation).
 */
class RedisSuppressionsTest {

  @Test
  void aBucketLiesInItsRecipientPartitionsSlotInEveryLayout() {
    for (int groups : new int[] {0, 64, 100_000}) {
      RedisKeys keys = new RedisKeys("fc:", groups);
      RedisSuppressions list = new RedisSuppressions(null, keys, null, () -> 0);
      Set<Integer> buckets = new HashSet<>();
      for (int i = 0; i < 5_000; i++) {
        String tenant = i % 2 == 0 ? "acme" : "t{}" + (i % 7);
        byte[] partition = SuppressionList.partitionOf(tenant, "+1555" + i);
        int bucket = list.bucket(partition);
        assertThat(bucket).isBetween(0, RedisSuppressions.BUCKETS - 1);
        byte[] key = list.bucketKey(tenant, bucket);
        assertThat(SlotHash.getSlot(key)).as("groups=%d, recipient %d", groups, i)
            .isEqualTo(SlotHash.getSlot(keys.key(partition)));
        buckets.add(bucket);
      }
      assertThat(buckets).as("groups=%d: spread over buckets", groups).hasSizeGreaterThan(4_500);
    }
  }

  @Test
  void aDecisionsScopeNamesTheBucketKeyTheFilterBitsThenTheRecipient() {
    RedisKeys keys = new RedisKeys("fc:");
    RedisSuppressions list = new RedisSuppressions(null, keys, null, () -> 0);
    byte[] partition = SuppressionList.partitionOf("acme", "+15550001");
    byte[] entry = list.entryOf(partition, keys.key(partition));
    int length = (entry[0] & 0xff) << 8 | entry[1] & 0xff;
    assertThat(Arrays.copyOfRange(entry, 2, 2 + length)).isEqualTo(list.bucketKey("acme", list.bucket(partition)));
    assertThat(Arrays.copyOfRange(entry, 2 + length, 4 + length)).isEqualTo(RedisSuppressions.filterBits(partition));
    assertThat(new String(entry, 4 + length, entry.length - 4 - length, StandardCharsets.UTF_8))
        .isEqualTo("+15550001");
    assertThat(new String(list.bucketKey("acme", 37), StandardCharsets.UTF_8)).matches("fc:\\{[0-9a-zA-Z]{1,3}\\}S5:acme");
  }

  @Test
  void anEntryReadsBackWholeAndIsNeverShorterThanNineBytes() {
    List<Suppression> entries = List.of(
        new Suppression("+1", List.of(), List.of(), "", "a", 0, Suppression.NEVER),
        new Suppression("+1", List.of(), List.of(), "", "a", -5, 1),
        new Suppression("+1", List.of("sms", "x".repeat(300)), List.of("marketing"), "replied STOP", "ops",
            1_795_768_791_875L, 1_795_772_391_875L),
        new Suppression("+1", List.of(), List.of("é"), "r".repeat(256), "k".repeat(1024), Long.MIN_VALUE,
            Long.MAX_VALUE));
    for (Suppression e : entries) {
      byte[] value = RedisSuppressions.encode(e);
      assertThat(value.length).isGreaterThanOrEqualTo(9);
      assertThat(RedisSuppressions.decode("+1", value)).isEqualTo(e);
    }
    assertThat(RedisSuppressions.encode(entries.get(2))).as("varints: a 300-byte channel takes two bytes of length")
        .hasSize(6 + 6 + 1 + (1 + 3) + (2 + 300) + 1 + (1 + 9) + (1 + 3) + 12);
  }
}
