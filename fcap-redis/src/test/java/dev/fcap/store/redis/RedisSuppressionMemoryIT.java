package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Suppression;
import dev.fcap.store.ManualClock;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.redis.testing.RedisExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a suppression entry costs in Redis memory at the density of 10^7 entries in one tenant
 * (12-character recipients, a 4-character reason, no expiry, every channel and category): the
 * entries fill one bucket in {@link #SAMPLE} (4,096 buckets) with what 10^7 entries would put in
 * each ({@link #PER_BUCKET}), and the growth of {@code used_memory} per entry beyond the recipient
 * id's own bytes must stay within 64 bytes (docs/redis.md, "Suppression lists").
 */
class RedisSuppressionMemoryIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();
  private static final int SAMPLE = 128;
  private static final int PER_BUCKET = (int) (10_000_000L / RedisSuppressions.BUCKETS);
  private static final int RECIPIENT_BYTES = 12;

  @Test
  void anEntryCostsAtMost64BytesBeyondTheRecipientIdAtTenMillionEntries() throws Exception {
    REDIS.deployment().flushAll();
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).build()) {
      RedisSuppressions list = (RedisSuppressions) store.as(SuppressionList.class).orElseThrow();
      int buckets = RedisSuppressions.BUCKETS / SAMPLE;
      int[] filled = new int[buckets];
      int entries = 0;
      long before = REDIS.deployment().usedMemory();
      List<Suppression> batch = new ArrayList<>(10_000);
      for (long i = 0; entries < buckets * PER_BUCKET && i < 100_000_000L; i++) {
        String recipient = "+1" + Long.toString(10_000_000_000L + i).substring(1); // 10 digits, zero-padded
        int bucket = list.bucket(SuppressionList.partitionOf("acme", recipient));
        if (bucket % SAMPLE != 0 || filled[bucket / SAMPLE] == PER_BUCKET) {
          continue;
        }
        filled[bucket / SAMPLE]++;
        entries++;
        batch.add(new Suppression(recipient, List.of(), List.of(), "STOP", "import", clock.millis(), Suppression.NEVER));
        if (batch.size() == 10_000) {
          list.putAll("acme", batch);
          batch.clear();
        }
      }
      list.putAll("acme", batch);
      assertThat(entries).isEqualTo(buckets * PER_BUCKET);
      long perEntry = (REDIS.deployment().usedMemory() - before) / entries - RECIPIENT_BYTES;
      Object reply = REDIS.deployment().masters().get(0).call("OBJECT", "ENCODING",
          new String(list.bucketKey("acme", 0), java.nio.charset.StandardCharsets.ISO_8859_1));
      String encoding = reply instanceof byte[] b ? new String(b, java.nio.charset.StandardCharsets.US_ASCII)
          : String.valueOf(reply);
      System.out.println("suppression entry at " + PER_BUCKET + " per bucket: " + perEntry
          + " B beyond the recipient id (used_memory / entry); a bucket's encoding: " + encoding);
      assertThat(list.size("acme")).isEqualTo(entries);
      assertThat(encoding).isEqualTo("listpack");
      assertThat(perEntry).isLessThanOrEqualTo(64);
    }
  }
}
