package dev.fcap.server.redis;

import dev.fcap.store.redis.testing.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The seed scenario on Redis (standalone) with the store in the grouped layout ({@code store.uri ?groups=16}). */
class ServerOnGroupedStandaloneIT extends SeedScenarioOnRedis {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  @Override
  RedisExtension redis() {
    return REDIS;
  }

  @Override
  int groups() {
    return 16;
  }
}
