package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The seed scenario and every endpoint, end to end over real HTTP against the embedded store. */
class HttpApiIT {
  static TestServer s;

  @BeforeAll
  static void start() {
    s = TestServer.seed();
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  @Test
  void seedScenarioSameContentTwicePer59sThenDenied() {
    String msg = "{\"recipient\": \"+8613800000001\", \"content\": \"Your code is 1234\"}";
    assertThat(s.decide(msg).body().get("allowed").asBoolean()).isTrue();
    assertThat(s.decide(msg).body().get("allowed").asBoolean()).isTrue();
    TestServer.Reply third = s.decide(msg);
    assertThat(third.status()).isEqualTo(200);
    JsonNode d = third.body();
    assertThat(d.get("allowed").asBoolean()).isFalse();
    assertThat(d.get("blockedBy")).extracting(JsonNode::asText).containsExactly("same-content-per-59s");
    assertThat(d.get("retryAfterMs").asLong()).isBetween(1L, 59_000L);
    assertThat(d.get("degraded").asBoolean()).isFalse();
    assertThat(d.get("rules")).hasSize(4);
    JsonNode rule = d.get("rules").get(2);
    assertThat(rule.get("id").asText()).isEqualTo("same-content-per-59s");
    assertThat(rule.get("used").asLong()).isEqualTo(2);
    assertThat(rule.get("remaining").asLong()).isZero();
    assertThat(rule.get("allowed").asBoolean()).isFalse();

    // other contents pass until the per-minute cap of 15
    int admitted = 2;
    for (int i = 0; i < 20; i++) {
      if (s.decide("{\"recipient\": \"+8613800000001\", \"content\": \"news " + i + "\"}").body().get("allowed")
          .asBoolean()) {
        admitted++;
      }
    }
    assertThat(admitted).isEqualTo(15);
    JsonNode blocked = s.decide("{\"recipient\": \"+8613800000001\", \"content\": \"one more\"}").body();
    assertThat(blocked.get("blockedBy")).extracting(JsonNode::asText).containsExactly("recipient-per-minute");

    JsonNode inspection = s.get("/v1/recipients/+8613800000001").body();
    assertThat(inspection.get("tenant").asText()).isEqualTo("default");
    JsonNode minute = inspection.get("counters").get(0);
    assertThat(minute.get("rule").asText()).isEqualTo("recipient-per-minute");
    assertThat(minute.get("used").asLong()).isEqualTo(15);
    assertThat(minute.get("freesInMs").asLong()).isPositive();
    List<String> contentRules = new ArrayList<>();
    inspection.get("counters").forEach(c -> {
      if (c.get("values").has("content")) {
        contentRules.add(c.get("rule").asText());
      }
    });
    assertThat(contentRules).contains("same-content-per-59s", "same-content-per-59m");
    assertThat(inspection.get("recentDenials").size()).isGreaterThanOrEqualTo(2);
    assertThat(inspection.get("recentDenials").get(0).get("blockedBy").get(0).asText())
        .isEqualTo("recipient-per-minute");
  }

  @Test
  void dryRunRecordsNothing() {
    String msg = "{\"recipient\": \"dry\", \"content\": \"x\", \"dryRun\": true}";
    for (int i = 0; i < 5; i++) {
      assertThat(s.decide(msg).body().get("allowed").asBoolean()).isTrue();
    }
    assertThat(s.get("/v1/recipients/dry").body().get("counters")).isEmpty();
  }

  @Test
  void releaseUndoesAndIsIdempotent() {
    String msg = "{\"recipient\": \"rel\", \"content\": \"x\"}";
    String id = s.decide(msg).body().get("decisionId").asText();
    s.decide(msg);
    assertThat(s.decide(msg).body().get("allowed").asBoolean()).isFalse();
    assertThat(s.post("/v1/decisions/" + id + "/release", null).body().get("released").asBoolean()).isTrue();
    assertThat(s.post("/v1/decisions/" + id + "/release", null).body().get("released").asBoolean()).isTrue();
    assertThat(s.decide(msg).body().get("allowed").asBoolean()).isTrue();
    assertThat(s.post("/v1/decisions/000000000000000000000000/release", null).body().get("released").asBoolean())
        .isFalse();
  }

  @Test
  void resetForgetsTheRecipient() {
    s.decide("{\"recipient\": \"gone\"}");
    assertThat(s.get("/v1/recipients/gone").body().get("counters")).isNotEmpty();
    assertThat(s.delete("/v1/recipients/gone").body().get("reset").asBoolean()).isTrue();
    assertThat(s.get("/v1/recipients/gone").body().get("counters")).isEmpty();
    assertThat(s.delete("/v1/recipients/gone").body().get("reset").asBoolean()).isFalse();
  }

  @Test
  void batchAnswersEachItemInOrderWithItsOwnError() {
    String body = "{\"requests\": [{\"recipient\": \"b1\", \"content\": \"c\"}, {\"recipient\": \"b1\", \"content\": \"c\"},"
        + " {\"content\": \"no recipient\"}, {\"recipient\": \"b1\", \"content\": \"c\"}, {\"recipient\": \"b2\", \"cost\": -3}]}";
    TestServer.Reply r = s.post("/v1/decisions/batch", body);
    assertThat(r.status()).isEqualTo(200);
    JsonNode results = r.body().get("results");
    assertThat(results).hasSize(5);
    assertThat(results.get(0).get("allowed").asBoolean()).isTrue();
    assertThat(results.get(1).get("allowed").asBoolean()).isTrue();
    assertThat(results.get(2).get("error").get("field").asText()).isEqualTo("recipient");
    assertThat(results.get(3).get("allowed").asBoolean()).isFalse();
    assertThat(results.get(4).get("error").get("field").asText()).isEqualTo("cost");
    assertThat(s.get("/v1/recipients/b2").body().get("counters")).isEmpty();
  }

  @Test
  void batchOfTenThousandIsAccepted() {
    StringBuilder b = new StringBuilder("{\"requests\": [");
    for (int i = 0; i < 10_000; i++) {
      b.append(i == 0 ? "" : ",").append("{\"recipient\": \"big-").append(i % 500).append("\"}");
    }
    JsonNode results = s.post("/v1/decisions/batch", b.append("]}").toString()).body().get("results");
    assertThat(results).hasSize(10_000);
    long allowed = 0;
    for (JsonNode r : results) {
      allowed += r.get("allowed").asBoolean() ? 1 : 0;
    }
    assertThat(allowed).isEqualTo(500 * 15);
  }

  @Test
  void healthReadyAndMetrics() throws Exception {
    assertThat(s.get("/health").status()).isEqualTo(200);
    TestServer.Reply ready = s.get("/ready");
    assertThat(ready.status()).isEqualTo(200);
    assertThat(ready.body().get("ready").asBoolean()).isTrue();
    s.decide("{\"recipient\": \"metrics\"}");
    String text = s.get("/metrics").raw().body();
    assertThat(text).contains("fcap_decisions_total{outcome=\"allowed\",tenant=\"default\"}")
        .contains("fcap_rule_decisions_total").contains("fcap_decision_seconds_bucket").contains("fcap_store_seconds")
        .contains("fcap_policy_version{tenant=\"default\"} 1.0").contains("fcap_store_partitions")
        .contains("fcap_audit_dropped_total").contains("fcap_store_up 1.0");
    // denials reach the audit file (asynchronously)
    Awaitility.await("a denial in the audit file").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
        .pollInSameThread().until(() -> Files.readString(s.dir.resolve("audit.jsonl")).contains("\"denied\""));
    assertThat(Files.readString(s.dir.resolve("audit.jsonl"))).contains("\"type\":\"denied\"");
  }
}
