package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.redis.testing.RedisExtension;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The seed scenario end to end over HTTP with everything on Redis: the store, the rules (seeded into
 * Redis from the built-in policy) and the audit stream. Subclasses pick the topology.
 */
abstract class SeedScenarioOnRedis {

  abstract RedisExtension redis();

  /** The store's groups ({@code store.uri ?groups=N}, docs/redis.md), or 0 for a key per partition. */
  int groups() {
    return 0;
  }

  @Test
  void seedScenarioWithRulesAndAuditInRedis() throws Exception {
    String uri = redis().uri();
    Map<String, String> extra = groups() == 0 ? Map.of() : Map.of("store.uri", uri + "?groups=" + groups());
    try (Node node = Node.onRedis(uri, "seed:rules", "seed:audit", extra);
        RedisEndpoint.Link redis = RedisEndpoint.parse("test", uri, java.util.Set.of())
            .connect(java.time.Duration.ofSeconds(5), java.time.Duration.ofSeconds(5))) {
      // the rules were seeded into Redis, as the YAML the file source writes
      List<Policy> stored = PolicyParser.parse(redis.sync().get("{seed:rules}"));
      assertThat(stored).hasSize(1);
      assertThat(stored.get(0).version()).isEqualTo(1);
      assertThat(stored.get(0).rules()).extracting(r -> r.id()).containsExactly("recipient-per-minute",
          "recipient-per-day", "same-content-per-59s", "same-content-per-59m");
      assertThat(node.server.describe()).contains("store: " + uri).contains("rules: redis ");
      assertThat(redis.sync().get("fc:layout")).as("the grouped layout's marker")
          .isEqualTo(groups() == 0 ? null : "groups=" + groups());

      String msg = "{\"recipient\": \"+8613800000001\", \"content\": \"Your code is 1234\"}";
      assertThat(node.decide(msg).allowed()).isTrue();
      assertThat(node.decide(msg).allowed()).isTrue();
      Node.Reply third = node.decide(msg);
      assertThat(third.status()).isEqualTo(200);
      JsonNode d = third.body();
      assertThat(d.get("allowed").asBoolean()).isFalse();
      assertThat(d.get("blockedBy")).extracting(JsonNode::asText).containsExactly("same-content-per-59s");
      assertThat(d.get("retryAfterMs").asLong()).isBetween(1L, 59_000L);
      assertThat(d.get("degraded").asBoolean()).isFalse();
      JsonNode rule = d.get("rules").get(2);
      assertThat(rule.get("id").asText()).isEqualTo("same-content-per-59s");
      assertThat(rule.get("used").asLong()).isEqualTo(2);
      assertThat(rule.get("remaining").asLong()).isZero();

      // other contents pass until the per-minute cap of 15
      int admitted = 2;
      for (int i = 0; i < 20; i++) {
        if (node.decide("{\"recipient\": \"+8613800000001\", \"content\": \"news " + i + "\"}").allowed()) {
          admitted++;
        }
      }
      assertThat(admitted).isEqualTo(15);
      JsonNode blocked = node.decide("{\"recipient\": \"+8613800000001\", \"content\": \"one more\"}").body();
      assertThat(blocked.get("blockedBy")).extracting(JsonNode::asText).containsExactly("recipient-per-minute");

      // inspect reads the counters back from Redis
      JsonNode inspection = node.get("/v1/recipients/+8613800000001").body();
      assertThat(inspection.get("degraded").asBoolean(false)).isFalse();
      JsonNode minute = inspection.get("counters").get(0);
      assertThat(minute.get("rule").asText()).isEqualTo("recipient-per-minute");
      assertThat(minute.get("used").asLong()).isEqualTo(15);

      // a deferral is booked in Redis for when the minute frees a slot: one more message now
      // refused, and the booking is counted (inspect lists it) until released
      JsonNode deferred = node.decide("{\"recipient\": \"+8613800000001\", \"content\": \"later\", "
          + "\"defer\": true}").body();
      assertThat(deferred.get("deferred").asBoolean()).as("%s", deferred).isTrue();
      assertThat(deferred.get("allowed").asBoolean()).isFalse();
      long sendAt = deferred.get("sendAt").asLong();
      assertThat(sendAt - deferred.get("time").asLong()).isBetween(1L, 60_000L);
      JsonNode booked = node.get("/v1/recipients/+8613800000001").body().get("booked");
      assertThat(booked).extracting(b -> b.get("time").asLong()).contains(sendAt);
      JsonNode second = node.decide("{\"recipient\": \"+8613800000001\", \"content\": \"later 2\", "
          + "\"defer\": true}").body();
      assertThat(second.get("sendAt").asLong()).as("no earlier than the slot before").isGreaterThanOrEqualTo(sendAt);
      assertThat(node.send("POST", "/v1/decisions/" + deferred.get("decisionId").asText() + "/release", "{}", Map.of())
          .body().get("released").asBoolean()).isTrue();
      assertThat(node.get("/v1/recipients/+8613800000001").body().get("booked"))
          .extracting(b -> b.get("time").asLong()).doesNotContain(sendAt);

      // release gives capacity back in Redis
      String id = node.decide("{\"recipient\": \"rel\", \"content\": \"x\"}").body().get("decisionId").asText();
      assertThat(node.send("POST", "/v1/decisions/" + id + "/release", "{}", Map.of()).body().get("released")
          .asBoolean()).isTrue();
      long used = 0;
      for (JsonNode c : node.get("/v1/recipients/rel").body().get("counters")) {
        used += c.get("used").asLong();
      }
      assertThat(used).isZero();

      // every denial reached the audit stream (the audit is asynchronous: wait for it)
      List<StreamMessage<String, String>> denied = awaitDenials(redis, "seed:audit", 2 + 5 + 1 + 2);
      assertThat(denied).as("the booking's denial line").anySatisfy(m -> assertThat(m.getBody())
          .containsEntry("deferred", "true").containsEntry("sendAt", Long.toString(sendAt)));
      StreamMessage<String, String> first = denied.get(0);
      assertThat(first.getBody()).containsEntry("recipient", "+8613800000001").containsEntry("tenant", "default")
          .containsEntry("blockedBy", "same-content-per-59s").containsEntry("policyVersion", "1")
          .containsKey("decisionId").containsKey("counts");
      assertThat(Node.JSON.readTree(first.getBody().get("counts")).get("same-content-per-59s").get("used").asLong())
          .isEqualTo(2);
      assertThat(node.get("/ready").status()).isEqualTo(200);
    }
  }

  /** The stream's {@code denied} entries, once there are at least {@code n} (polled for up to 10 s). */
  static List<StreamMessage<String, String>> awaitDenials(RedisEndpoint.Link redis, String stream, int n) {
    List<StreamMessage<String, String>> denied = Awaitility.await(n + " denials in " + stream)
        .atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).pollInSameThread()
        .until(() -> denials(redis, stream), d -> d.size() >= n);
    assertThat(denied).hasSizeGreaterThanOrEqualTo(n);
    return denied;
  }

  private static List<StreamMessage<String, String>> denials(RedisEndpoint.Link redis, String stream) {
    List<StreamMessage<String, String>> denied = new ArrayList<>();
    for (StreamMessage<String, String> m : redis.sync().xrange(stream, Range.create("-", "+"))) {
      if ("denied".equals(m.getBody().get("type"))) {
        denied.add(m);
      }
    }
    return denied;
  }
}
