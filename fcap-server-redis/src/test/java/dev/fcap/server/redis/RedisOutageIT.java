package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.redis.testing.RedisExtension;
import dev.fcap.store.redis.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The failure policy with a real Redis stopped, paused and restarted: errors to retry until the
 * outage window is over, then degraded decisions by category, nobody waiting for Redis, automatic
 * recovery afterwards with the outage's admissions and bookings written back to Redis. (Counts per recipient
 * under load over whole episodes: {@code OutageEpisodesIT}.)
 */
class RedisOutageIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  private static final Map<String, String> SETTINGS = Map.of("store.timeout", "300ms", "failure.probeInterval",
      "100ms", "failure.window", "500ms", "failure.categories", "{marketing: deny}");

  /** Polls (bounded, 30 s) until a decision is degraded: the outage has been declared. */
  private static void awaitOutage(Node node) {
    Awaitility.await("the outage").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
        .pollInSameThread().until(() -> {
          Node.Reply r = node.decide("{\"recipient\": \"probe\", \"dryRun\": true}");
          boolean down = r.status() == 200 && r.degraded();
          if (!down) {
            assertThat(r.status()).as("before the outage: retry later").isIn(429, 503);
          }
          return down;
        });
  }

  @Test
  void stoppedAndRestarted() throws Exception {
    RedisServer redis = REDIS.deployment().servers().get(0);
    try (Node node = Node.onRedis(REDIS.uri(), "out:rules", "out:audit", SETTINGS)) {
      String otp = "{\"recipient\": \"r\", \"content\": \"code 1\"}";
      assertThat(node.decide(otp).degraded()).isFalse();

      redis.stop();
      awaitOutage(node);
      // default category: decided locally for the outage, rules still enforced, marked degraded
      Node.Reply first = node.decide(otp);
      assertThat(first.degraded()).isTrue();
      assertThat(first.allowed()).isTrue();
      assertThat(node.decide(otp).allowed()).isTrue();
      JsonNode third = node.decide(otp).body();
      assertThat(third.get("degraded").asBoolean()).isTrue();
      assertThat(third.get("allowed").asBoolean()).isFalse();
      assertThat(third.get("blockedBy").get(0).asText()).isEqualTo("same-content-per-59s");
      // a deferral is booked locally too, for when the first local "code 1" leaves the 59 s window
      JsonNode booked = node.decide("{\"recipient\": \"r\", \"content\": \"code 1\", \"defer\": true}").body();
      assertThat(booked.get("degraded").asBoolean()).isTrue();
      assertThat(booked.get("deferred").asBoolean()).as("%s", booked).isTrue();
      assertThat(booked.get("sendAt").asLong()).isEqualTo(first.body().get("time").asLong() + 59_000);
      Node.Reply otherContent = node.decide("{\"recipient\": \"r\", \"content\": \"code 2\"}");
      assertThat(otherContent.allowed()).isTrue();
      // transactional: allow (the default); marketing: deny (configured)
      Node.Reply tx = node.decide("{\"recipient\": \"t\", \"category\": \"transactional\"}");
      assertThat(tx.degraded()).isTrue();
      assertThat(tx.allowed()).isTrue();
      Node.Reply promo = node.decide("{\"recipient\": \"fresh\", \"category\": \"marketing\"}");
      assertThat(promo.degraded()).isTrue();
      assertThat(promo.allowed()).isFalse();
      assertThat(node.get("/ready").status()).isEqualTo(503);
      assertThat(node.server.failover().down()).isTrue();

      redis.restart();
      awaitRecovery(node);
      // the restarted Redis is empty (no persistence here), but what the node admitted during the
      // outage was written back: r's two local admissions of "code 1" count, no fresh quota
      JsonNode again = node.decide(otp).body();
      assertThat(again.get("degraded").asBoolean()).isFalse();
      assertThat(again.get("allowed").asBoolean()).isFalse();
      assertThat(again.get("blockedBy").get(0).asText()).isEqualTo("same-content-per-59s");
      assertThat(node.server.failover().writtenBack()).isEqualTo(4);
      // and the local booking is booked in Redis at its instant
      assertThat(node.get("/v1/recipients/r").body().get("booked")).extracting(b -> b.get("time").asLong())
          .contains(booked.get("sendAt").asLong());
      // decisions go to Redis again: the recipient's counter is a key there
      Node.Reply after = node.decide("{\"recipient\": \"after-restart\"}");
      assertThat(after.degraded()).isFalse();
      assertThat(after.allowed()).isTrue();
      assertThat(keys(redis, "fc:*")).isNotEmpty();
      assertThat(node.get("/ready").status()).isEqualTo(200);
      // the restarted Redis lost everything (no persistence here): the node wrote its rules back
      String rules = Awaitility.await("the rules written back").atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50)).pollInSameThread()
          .until(() -> (String) redis.call("GET", "{out:rules}"), Objects::nonNull);
      assertThat(rules).contains("recipient-per-minute");
    }
  }

  @Test
  void aHangingRedisIsCutOffByTheTimeout() throws Exception {
    RedisServer redis = REDIS.deployment().servers().get(0);
    try (Node node = Node.onRedis(REDIS.uri(), "hang:rules", "hang:audit", SETTINGS)) {
      assertThat(node.decide("{\"recipient\": \"h\"}").degraded()).isFalse();
      // Redis frozen (SIGSTOP) until the test thaws it: every answer below comes while Redis answers nothing,
      // first as busy (429, after store.timeout), then, once it has been silent for failure.window, from
      // the failure policy; a server that waited for Redis would miss the client's 20 s read timeout
      redis.pause();
      Node.Reply d;
      Node.Reply promo;
      try {
        Node.Reply busy = node.decide("{\"recipient\": \"h\"}");
        assertThat(busy.status()).isEqualTo(429);
        assertThat(busy.body().get("error").get("code").asText()).isEqualTo("store_busy");
        awaitOutage(node);
        d = node.decide("{\"recipient\": \"h\"}");
        promo = node.decide("{\"recipient\": \"h\", \"category\": \"marketing\"}");
      } finally {
        redis.resume();
      }
      assertThat(d.degraded()).isTrue();
      assertThat(d.allowed()).isTrue();
      assertThat(promo.degraded()).isTrue();
      assertThat(promo.allowed()).isFalse();

      awaitRecovery(node);
      assertThat(node.decide("{\"recipient\": \"h2\"}").degraded()).isFalse();
    }
  }

  /** Polls (bounded, 30 s) until a decision is no longer degraded. */
  private static void awaitRecovery(Node node) {
    Awaitility.await("the recovery").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
        .pollInSameThread().until(() -> !node.decide("{\"recipient\": \"probe\", \"dryRun\": true}").degraded());
    assertThat(node.server.failover().down()).isFalse();
  }

  private static List<?> keys(RedisServer redis, String pattern) throws Exception {
    return (List<?>) redis.call("KEYS", pattern);
  }
}
