package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Counted overrides on a running server: a {@code countOnly} rule lets its messages through and
 * counts them, so that a later marketing message is refused; an override goes past every cap and is
 * counted too, needs the {@code override} role (403 naming the field without it, nothing recorded),
 * and is audited every time with who asked, admissions sampled or not.
 */
class OverrideIT {
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - id: two-per-hour
              limit: 2
              window: 1h
              key: [recipient]
              countOnly: {category: [transactional]}
      """;

  private static TestServer start() {
    String keys = "[{name: sender, sha256: " + AuthIT.hash("secret-s") + ", tenants: ['*'], roles: [decide, read]},"
        + " {name: support, sha256: " + AuthIT.hash("secret-o") + ", tenants: ['*'], roles: [decide, read, override]}]";
    return TestServer.start(RULES, Map.of("apiKeys", keys, "audit.sampleAdmissions", "0"));
  }

  private static String message(String recipient, String category, boolean override) {
    return "{\"recipient\": \"" + recipient + "\", \"category\": \"" + category + "\""
        + (override ? ", \"override\": true" : "") + "}";
  }

  @Test
  void countOnlyMessagesGoAndUseUpTheCapSoMarketingIsRefused() {
    try (TestServer s = start()) {
      s.as("secret-s");
      for (int i = 0; i < 3; i++) { // past the limit: transactional is never refused by this rule
        JsonNode d = s.decide(message("r1", "transactional", false)).body();
        assertThat(d.get("allowed").asBoolean()).as("transactional %d", i).isTrue();
        assertThat(d.get("rules").get(0).get("enforced").asBoolean()).isFalse();
      }
      JsonNode marketing = s.decide(message("r1", "marketing", false)).body();
      assertThat(marketing.get("allowed").asBoolean()).isFalse();
      assertThat(marketing.get("blockedBy").get(0).asText()).isEqualTo("two-per-hour");
      assertThat(marketing.get("rules").get(0).get("used").asLong()).isEqualTo(3);
      assertThat(s.get("/v1/recipients/r1").body().get("counters").get(0).get("used").asLong()).isEqualTo(3);
    }
  }

  @Test
  void anOverrideNeedsItsRoleGoesPastTheCapIsCountedAndAudited() throws Exception {
    try (TestServer s = start()) {
      s.as("secret-s");
      for (int i = 0; i < 2; i++) {
        assertThat(s.decide(message("r2", "marketing", false)).body().get("allowed").asBoolean()).isTrue();
      }
      TestServer.Reply forbidden = s.decide(message("r2", "marketing", true));
      assertThat(forbidden.status()).isEqualTo(403);
      assertThat(forbidden.errorCode()).isEqualTo("forbidden");
      assertThat(forbidden.body().get("error").get("field").asText()).isEqualTo("override");
      assertThat(forbidden.body().get("error").get("message").asText()).contains("'override'");
      assertThat(s.get("/v1/recipients/r2").body().get("counters").get(0).get("used").asLong()).isEqualTo(2);

      s.as("secret-o");
      JsonNode over = s.decide(message("r2", "marketing", true)).body();
      assertThat(over.get("allowed").asBoolean()).isTrue();
      assertThat(over.get("shadowBlockedBy").get(0).asText()).isEqualTo("two-per-hour"); // it would have refused
      assertThat(s.get("/v1/recipients/r2").body().get("counters").get(0).get("used").asLong()).isEqualTo(3);
      JsonNode batch = s.post("/v1/decisions/batch", "{\"requests\": [" + message("r2", "marketing", true) + ", "
          + message("r2", "marketing", false) + "]}").body().get("results");
      assertThat(batch.get(0).get("allowed").asBoolean()).isTrue();
      assertThat(batch.get(1).get("allowed").asBoolean()).isFalse();

      // admissions are not sampled here (audit.sampleAdmissions 0), yet both overrides are recorded, with who asked
      await().atMost(Duration.ofSeconds(30)).pollInSameThread().until(() -> overrides(s).size() == 2);
      for (JsonNode line : overrides(s)) {
        assertThat(line.get("type").asText()).isEqualTo("allowed");
        assertThat(line.get("who").asText()).isEqualTo("support");
        assertThat(line.get("recipient").asText()).isEqualTo("r2");
      }
    }
  }

  private static List<JsonNode> overrides(TestServer s) throws Exception {
    return Files.readAllLines(s.dir.resolve("audit.jsonl")).stream().map(l -> {
      try {
        return TestServer.JSON.readTree(l);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }).filter(j -> "override".equals(j.path("detail").asText())).toList();
  }
}
