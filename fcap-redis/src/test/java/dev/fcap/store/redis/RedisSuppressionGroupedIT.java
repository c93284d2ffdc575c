package dev.fcap.store.redis;

import dev.fcap.store.ManualClock;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RedisSuppressionContract} on a standalone Redis in the grouped layout. */
class RedisSuppressionGroupedIT extends RedisSuppressionContract {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  @Override
  RedisDeployment deployment() {
    return REDIS.deployment();
  }

  @Override
  RedisStore newStore(ManualClock clock) throws Exception {
    REDIS.deployment().flushAll();
    return RedisStore.builder(REDIS.uri()).groups(64).clock(clock).build();
  }
}
