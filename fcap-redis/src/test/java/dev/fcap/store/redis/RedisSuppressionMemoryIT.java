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
 * What a suppression entry costs in Redis memory: 10^5 entries of one tenant (12-character
 * recipients, a 4-character reason, no expiry, every channel and category), measured as the growth
 * of {@code used_memory} per entry beyond the recipient id's own bytes; the figure is in
 * docs/redis.md ("Suppression lists") and must not grow past it unnoticed.
 */
class RedisSuppressionMemoryIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();
  private static final int ENTRIES = 100_000;
  private static final int RECIPIENT_BYTES = 12;

  @Test
  void anEntryCostsAtMostItsDocumentedBytesBeyondTheRecipientId() throws Exception {
    REDIS.deployment().flushAll();
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    try (RedisStore store = RedisStore.builder(REDIS.uri()).clock(clock).build()) {
      SuppressionList list = store.as(SuppressionList.class).orElseThrow();
      long before = REDIS.deployment().usedMemory();
      List<Suppression> batch = new ArrayList<>(10_000);
      for (int i = 0; i < ENTRIES; i++) {
        batch.add(new Suppression("+1555" + String.format("%07d", i), List.of(), List.of(), "STOP", "import",
            clock.millis(), Suppression.NEVER));
        if (batch.size() == 10_000) {
          list.putAll("acme", batch);
          batch.clear();
        }
      }
      long perEntry = (REDIS.deployment().usedMemory() - before) / ENTRIES - RECIPIENT_BYTES;
      Object usage = REDIS.deployment().masters().get(0).call("MEMORY", "USAGE",
          new String(new RedisSuppressions(null, new RedisKeys("fc:"), null, clock::millis)
              .key(SuppressionList.partitionOf("acme", "+15550000001")), java.nio.charset.StandardCharsets.ISO_8859_1));
      System.out.println("suppression entry: " + perEntry + " B beyond the recipient id (used_memory / entry); "
          + "MEMORY USAGE of one key: " + usage);
      assertThat(perEntry).isLessThanOrEqualTo(128); // measured: 125 B (Redis 7.0, jemalloc)
    }
  }
}
