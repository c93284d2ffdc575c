package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.server.auth.Authenticator;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** API keys, roles and tenant isolation over HTTP. */
class AuthIT {
  private static final String RULES = """
      policies:
        - tenant: shop-a
          rules:
            - {id: per-minute, limit: 2, window: 1m, key: [recipient]}
        - tenant: shop-b
          rules:
            - {id: per-minute, limit: 2, window: 1m, key: [recipient]}
      """;
  static TestServer s;

  static String hash(String secret) {
    return HexFormat.of().formatHex(Authenticator.sha256(secret));
  }

  @BeforeAll
  static void start() {
    String keys = "[{name: a-sender, sha256: " + hash("secret-a") + ", tenants: [shop-a], roles: [decide]},"
        + " {name: a-reader, sha256: " + hash("secret-r") + ", tenants: [shop-a], roles: [read]},"
        + " {name: b-sender, sha256: " + hash("secret-b") + ", tenants: [shop-b], roles: [decide, read]},"
        + " {name: ops, sha256: " + hash("secret-ops") + ", tenants: ['*'], roles: [decide, read, admin]}]";
    s = TestServer.start(RULES, Map.of("apiKeys", keys));
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  @Test
  void missingOrUnknownKeyIs401WithAClearBody() {
    TestServer.Reply none = s.as(null).decide("{\"recipient\": \"r\", \"tenant\": \"shop-a\"}");
    assertThat(none.status()).isEqualTo(401);
    assertThat(none.errorCode()).isEqualTo("unauthenticated");
    assertThat(none.body().get("error").get("message").asText()).contains("Authorization: Bearer");
    TestServer.Reply wrong = s.as("secret-x").decide("{\"recipient\": \"r\", \"tenant\": \"shop-a\"}");
    assertThat(wrong.status()).isEqualTo(401);
    assertThat(wrong.body().get("error").get("message").asText()).isEqualTo("unknown API key");
    TestServer.Reply viaHeader = s.as(null).send("POST", "/v1/decisions", "{\"recipient\": \"r\", \"tenant\": \"shop-a\"}",
        Map.of("X-Api-Key", "secret-a"));
    assertThat(viaHeader.status()).isEqualTo(200);
  }

  @Test
  void aKeySeesOnlyItsTenants() {
    assertThat(s.as("secret-a").decide("{\"recipient\": \"iso\", \"tenant\": \"shop-a\"}").status()).isEqualTo(200);
    TestServer.Reply other = s.as("secret-a").decide("{\"recipient\": \"iso\", \"tenant\": \"shop-b\"}");
    assertThat(other.status()).isEqualTo(403);
    assertThat(other.errorCode()).isEqualTo("forbidden");
    assertThat(other.errorField()).isEqualTo("tenant");
    // the refused request recorded nothing in shop-b
    assertThat(s.as("secret-b").get("/v1/recipients/iso?tenant=shop-b").body().get("counters")).isEmpty();
    assertThat(s.as("secret-b").get("/v1/recipients/iso?tenant=shop-a").status()).isEqualTo(403);
    // the same recipient in two tenants has two separate counters
    s.as("secret-b").decide("{\"recipient\": \"iso\", \"tenant\": \"shop-b\"}");
    assertThat(s.as("secret-r").get("/v1/recipients/iso?tenant=shop-a").body().get("counters").get(0).get("used")
        .asLong()).isEqualTo(1);
  }

  @Test
  void rolesAreEnforced() {
    TestServer.Reply readerDecides = s.as("secret-r").decide("{\"recipient\": \"r\", \"tenant\": \"shop-a\"}");
    assertThat(readerDecides.status()).isEqualTo(403);
    assertThat(readerDecides.body().get("error").get("message").asText()).contains("decide");
    assertThat(s.as("secret-a").get("/v1/recipients/r?tenant=shop-a").status()).isEqualTo(403);
    assertThat(s.as("secret-r").get("/v1/rules?tenant=shop-a").status()).isEqualTo(200);
    assertThat(s.as("secret-r").delete("/v1/recipients/r?tenant=shop-a").status()).isEqualTo(403);
    assertThat(s.as("secret-r").put("/v1/rules?tenant=shop-a", "{\"rules\": []}", Map.of()).status()).isEqualTo(403);
    assertThat(s.as("secret-a").get("/metrics").status()).isEqualTo(403);
    assertThat(s.as("secret-ops").get("/metrics").status()).isEqualTo(200);
    assertThat(s.as(null).get("/health").status()).isEqualTo(200);
  }

  @Test
  void aKeyCannotReleaseAnotherTenantsDecision() {
    String id = s.as("secret-b").decide("{\"recipient\": \"rel\", \"tenant\": \"shop-b\"}").body().get("decisionId")
        .asText();
    assertThat(s.as("secret-a").post("/v1/decisions/" + id + "/release", null).body().get("released").asBoolean())
        .isFalse();
    assertThat(s.as("secret-b").get("/v1/recipients/rel?tenant=shop-b").body().get("counters").get(0).get("used")
        .asLong()).isEqualTo(1);
    assertThat(s.as("secret-b").post("/v1/decisions/" + id + "/release", null).body().get("released").asBoolean())
        .isTrue();
  }

  @Test
  void batchItemsOfForbiddenTenantsGetTheirOwnError() {
    var results = s.as("secret-a").post("/v1/decisions/batch",
        "{\"requests\": [{\"recipient\": \"bt\", \"tenant\": \"shop-a\"}, {\"recipient\": \"bt\", \"tenant\": \"shop-b\"}]}")
        .body().get("results");
    assertThat(results.get(0).get("allowed").asBoolean()).isTrue();
    assertThat(results.get(1).get("error").get("code").asText()).isEqualTo("forbidden");
  }
}
