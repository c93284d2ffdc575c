package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Suppression lists over HTTP on the embedded store: an entry answers at once (a decision after the
 * PUT is refused with {@code suppressed} and its reason, nothing counted), in its scope only; bad
 * input is a 400 naming the field; the {@code suppress} role (or {@code admin}) is needed; every
 * change is audited; the list survives a restart on the same data directory.
 */
class SuppressionIT {
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - {id: two-per-day, limit: 2, window: 24h, key: [recipient]}
      """;

  @Test
  void aPutRefusesTheNextDecisionInItsScopeAndADeleteLiftsIt() throws Exception {
    java.nio.file.Path dir;
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      TestServer.Reply put = s.put("/v1/suppressions/%2B1",
          "{\"channels\": [\"sms\"], \"reason\": \"replied STOP\"}", Map.of());
      assertThat(put.status()).isEqualTo(200);
      assertThat(put.body().get("recipient").asText()).isEqualTo("+1");
      assertThat(put.body().get("addedBy").asText()).isEqualTo("local");
      assertThat(put.body().get("expiresAt").asLong()).isEqualTo(-1);

      JsonNode refused = s.decide("{\"recipient\": \"+1\", \"channel\": \"sms\"}").body();
      assertThat(refused.get("allowed").asBoolean()).isFalse();
      assertThat(refused.get("blockedBy").get(0).asText()).isEqualTo("suppressed");
      assertThat(refused.get("suppressedReason").asText()).isEqualTo("replied STOP");
      assertThat(refused.get("sendAt").asLong()).isEqualTo(-1);
      assertThat(s.decide("{\"recipient\": \"+1\", \"channel\": \"email\"}").body().get("allowed").asBoolean())
          .as("another channel").isTrue();

      assertThat(s.get("/v1/suppressions/%2B1").body().get("reason").asText()).isEqualTo("replied STOP");
      JsonNode page = s.get("/v1/suppressions?limit=10").body();
      assertThat(page.get("items")).hasSize(1);
      assertThat(page.has("nextCursor")).isFalse();

      assertThat(s.delete("/v1/suppressions/%2B1").body().get("removed").asBoolean()).isTrue();
      assertThat(s.get("/v1/suppressions/%2B1").status()).isEqualTo(404);
      assertThat(s.decide("{\"recipient\": \"+1\", \"channel\": \"sms\"}").body().get("allowed").asBoolean())
          .as("the refusal counted nothing: the second of the day").isTrue();
      dir = s.dir;
    }
    // the audit is written behind the calls; closing the server flushes it
    assertThat(Files.readString(dir.resolve("audit.admin.jsonl"))).contains("suppression_put").contains("suppression_delete");
  }

  @Test
  void anImportAppliesTheGoodRowsAndReportsEachBadOneWithItsLine() {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      String csv = String.join("\n",
          "recipient,channels,reason,expiresAt",
          "+1,sms,replied STOP,",
          "+2,,complaint,soon",
          "+3,sms|email,\"legal, block list\",4102444800000",
          "+4,sms",
          "",
          "+5,,,") + "\r\n";
      TestServer.Reply r = s.send("POST", "/v1/suppressions/import", csv, Map.of("Content-Type", "text/csv"));
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.body().get("applied").asLong()).isEqualTo(3);
      assertThat(r.body().get("rejected").asLong()).isEqualTo(2);
      JsonNode errors = r.body().get("errors");
      assertThat(errors).hasSize(2);
      assertThat(errors.get(0).get("line").asLong()).isEqualTo(3);
      assertThat(errors.get(0).get("field").asText()).isEqualTo("expiresAt");
      assertThat(errors.get(1).get("line").asLong()).isEqualTo(5);
      assertThat(errors.get(1).get("code").asText()).isEqualTo("invalid_row");
      assertThat(s.get("/v1/suppressions/%2B3").body().get("reason").asText()).isEqualTo("legal, block list");
      assertThat(s.get("/v1/suppressions/%2B3").body().get("channels")).hasSize(2);
      assertThat(s.get("/v1/suppressions/%2B2").status()).isEqualTo(404);
      assertThat(s.decide("{\"recipient\": \"+5\"}").body().get("blockedBy").get(0).asText()).isEqualTo("suppressed");

      String ndjson = String.join("\n",
          "{\"recipient\": \"n1\", \"categories\": [\"marketing\"], \"reason\": \"opt-out\"}",
          "{\"recipient\": \"n2\", \"reason\": ",
          "{\"recipient\": \"n3\", \"channel\": \"sms\"}",
          "{\"reason\": \"no one\"}",
          "{\"recipient\": \"n5\", \"expiresAt\": 4102444800000}");
      JsonNode n = s.send("POST", "/v1/suppressions/import?tenant=default", ndjson,
          Map.of("Content-Type", "application/x-ndjson")).body();
      assertThat(n.get("applied").asLong()).isEqualTo(2);
      assertThat(n.get("errors")).extracting(e -> e.get("line").asLong()).containsExactly(2L, 3L, 4L);
      assertThat(n.get("errors")).extracting(e -> e.path("field").asText(null))
          .containsExactly(null, "channel", "recipient");
      assertThat(s.decide("{\"recipient\": \"n1\", \"category\": \"marketing\"}").body().get("suppressedReason")
          .asText()).isEqualTo("opt-out");

      TestServer.Reply json = s.send("POST", "/v1/suppressions/import", "{}", Map.of());
      assertThat(json.status()).isEqualTo(415);
      TestServer.Reply badHeader = s.send("POST", "/v1/suppressions/import", "recipient,colour\nx,red\n",
          Map.of("Content-Type", "text/csv"));
      assertThat(badHeader.body().get("applied").asLong()).isZero();
      assertThat(badHeader.body().get("errors").get(0).get("field").asText()).isEqualTo("colour");
    }
  }

  @Test
  void badInputIsA400NamingTheFieldAndChangesNothing() {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      assertThat(s.put("/v1/suppressions/r", "{\"channel\": [\"sms\"]}", Map.of()).errorField()).isEqualTo("channel");
      TestServer.Reply notList = s.put("/v1/suppressions/r", "{\"channels\": \"sms\"}", Map.of());
      assertThat(notList.status()).isEqualTo(400);
      assertThat(notList.errorField()).isEqualTo("channels");
      assertThat(s.put("/v1/suppressions/r", "{\"expiresAt\": 1000}", Map.of()).errorField()).isEqualTo("expiresAt");
      assertThat(s.put("/v1/suppressions/r", "{\"expiresAt\": \"soon\"}", Map.of()).errorField())
          .isEqualTo("expiresAt");
      assertThat(s.put("/v1/suppressions/r", "{\"reason\": \"" + "x".repeat(257) + "\"}", Map.of()).errorField())
          .isEqualTo("reason");
      assertThat(s.get("/v1/suppressions?limit=0").errorField()).isEqualTo("limit");
      assertThat(s.get("/v1/suppressions?limit=x").errorField()).isEqualTo("limit");
      assertThat(s.get("/v1/suppressions").body().get("items")).isEmpty();
      assertThat(s.decide("{\"recipient\": \"r\"}").body().get("allowed").asBoolean()).isTrue();
    }
  }

  @Test
  void theSuppressRoleOrAdminIsNeeded() {
    String keys = "[{name: sender, sha256: " + hash("s") + ", tenants: ['*'], roles: [decide, read]},"
        + " {name: support, sha256: " + hash("p") + ", tenants: ['*'], roles: [suppress]},"
        + " {name: ops, sha256: " + hash("o") + ", tenants: ['*'], roles: [admin]}]";
    try (TestServer s = TestServer.start(RULES, Map.of("apiKeys", keys))) {
      assertThat(s.as("s").put("/v1/suppressions/r", "{}", Map.of()).status()).isEqualTo(403);
      TestServer.Reply bySupport = s.as("p").put("/v1/suppressions/r", "{\"reason\": \"complaint\"}", Map.of());
      assertThat(bySupport.status()).isEqualTo(200);
      assertThat(bySupport.body().get("addedBy").asText()).isEqualTo("support");
      assertThat(s.as("o").get("/v1/suppressions/r").status()).isEqualTo(200);
      assertThat(s.as("s").get("/v1/suppressions/r").status()).isEqualTo(403);
    }
  }

  @Test
  void theListSurvivesARestartOnTheSameDataDirectory() throws Exception {
    java.nio.file.Path data = Files.createTempDirectory("fcap-suppress");
    Map<String, String> settings = Map.of("store.dir", data.toString());
    try (TestServer s = TestServer.start(RULES, settings)) {
      assertThat(s.put("/v1/suppressions/r", "{\"reason\": \"legal\"}", Map.of()).status()).isEqualTo(200);
    }
    try (TestServer s = TestServer.start(RULES, settings)) {
      JsonNode d = s.decide("{\"recipient\": \"r\"}").body();
      assertThat(d.get("suppressedReason").asText()).isEqualTo("legal");
    }
  }

  private static String hash(String secret) {
    return HexFormat.of().formatHex(dev.fcap.server.auth.Authenticator.sha256(secret));
  }
}
