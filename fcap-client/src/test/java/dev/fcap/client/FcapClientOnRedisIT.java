package dev.fcap.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.redis.testing.RedisDeployment;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The core scenarios of {@link FcapClientIT} against a server whose store is a real {@code redis-server}
 * (standalone, on loopback, started by the fcap-redis harness): decide, check, release, inspect and reset;
 * a message id decided once and released by itself; a retry after a lost answer counted once; and the
 * server stopped and restarted twice under a deciding client, which finds its counters and message ids
 * in Redis and counts nothing twice.
 */
class FcapClientOnRedisIT {
  static RedisDeployment redis;
  static RealServer server;
  static FcapClient fcap;

  @BeforeAll
  static void start() throws Exception {
    redis = RedisDeployment.standalone();
    server = RealServer.start(RealServer.RULES, onRedis());
    fcap = FcapClient.create(FcapClientIT.options(server.url()).build());
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  /** The store on Redis; a generous store timeout, since the machine is shared (a 429 would fail a test). */
  private static Map<String, String> onRedis() {
    return Map.of("store.uri", redis.uri(), "store.timeout", "2s");
  }

  @Test
  void decideCheckReleaseInspectReset() {
    FcapClientIT.decideCheckReleaseInspectReset(fcap);
  }

  @Test
  void aMessageIdDecidesOnceAndReleasesByItself() {
    FcapClientIT.aMessageIdDecidesOnceAndReleasesByItself(fcap);
  }

  @Test
  void aRetryAfterALostAnswerReusesTheMessageIdAndIsCountedOnce() throws Exception {
    FcapClientIT.aRetryAfterALostAnswerReusesTheMessageIdAndIsCountedOnce(server, fcap);
  }

  @Test
  void aServerRestartUnderTheClientLosesNothingAndCountsNothingTwice() throws Exception {
    try (RealServer restarting = RealServer.start(RealServer.RULES.replace("limit: 200,", "limit: 100000,"),
        onRedis())) {
      FcapClientIT.restartUnderTheClient(restarting, true);
    }
  }

  @Test
  void theCountersAreInRedis() throws Exception {
    // the scenarios above would pass on an embedded store too: the new recipient's counter is a Redis key
    long before = (Long) redis.servers().get(0).call("DBSIZE");
    assertThat(fcap.decide(Message.of("on-redis")).allowed()).isTrue();
    assertThat((Long) redis.servers().get(0).call("DBSIZE")).isGreaterThan(before);
  }
}
