package dev.fcap.server.redis;

import dev.fcap.store.redis.testing.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The seed scenario with store, rules and audit on Redis (a 3-master cluster). */
class ServerOnClusterIT extends SeedScenarioOnRedis {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.cluster();

  @Override
  RedisExtension redis() {
    return REDIS;
  }
}
