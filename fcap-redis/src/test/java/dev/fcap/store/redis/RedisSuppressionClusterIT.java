package dev.fcap.store.redis;

import dev.fcap.store.ManualClock;
import dev.fcap.store.redis.testing.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RedisSuppressionContract} on a Redis Cluster: the entry lies in its recipient partition's slot. */
class RedisSuppressionClusterIT extends RedisSuppressionContract {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.cluster();

  @Override
  RedisStore newStore(ManualClock clock) throws Exception {
    REDIS.deployment().flushAll();
    return RedisStore.builder(REDIS.uri()).clock(clock).build();
  }
}
