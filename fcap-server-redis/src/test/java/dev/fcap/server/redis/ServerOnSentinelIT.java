package dev.fcap.server.redis;

import dev.fcap.store.redis.testing.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The seed scenario with store, rules and audit on Redis (sentinel). */
class ServerOnSentinelIT extends SeedScenarioOnRedis {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.sentinel();

  @Override
  RedisExtension redis() {
    return REDIS;
  }
}
