package dev.fcap.store.redis;

import dev.fcap.store.ManualClock;
import dev.fcap.store.Store;
import dev.fcap.store.StoreContract;
import dev.fcap.store.redis.testing.RedisExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store test kit, unchanged, against Redis standalone in the grouped layout (docs/redis.md,
 * "Several partitions per key"): four groups, so partitions of a test share their hashes.
 */
class RedisStoreGroupedContractIT extends StoreContract {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  @Override
  protected Store newStore(ManualClock clock) {
    try {
      REDIS.deployment().flushAll();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return RedisStore.builder(REDIS.uri()).clock(clock).groups(4).build();
  }
}
