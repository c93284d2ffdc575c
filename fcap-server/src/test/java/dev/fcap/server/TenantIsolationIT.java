package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tenant isolation and failed authentication: a {@code read} key of one tenant sees
 * nothing of another in any endpoint; metric labels are bounded; refused keys are counted, and
 * refused before the body is read.
 */
class TenantIsolationIT {
  private static final String RULES = """
      policies:
        - tenant: shop-a
          rules:
            - {id: a-per-minute, limit: 2, window: 1m, key: [recipient]}
        - tenant: shop-b
          rules:
            - {id: b-secret-rule, limit: 2, window: 1m, key: [recipient]}
      """;
  static TestServer s;

  @BeforeAll
  static void start() {
    String keys = "[{name: a-reader, sha256: " + AuthIT.hash("secret-ar") + ", tenants: [shop-a], roles: [read]},"
        + " {name: a-sender, sha256: " + AuthIT.hash("secret-as") + ", tenants: [shop-a], roles: [decide]},"
        + " {name: b-sender, sha256: " + AuthIT.hash("secret-b") + ", tenants: [shop-b], roles: [decide, read]},"
        + " {name: ops, sha256: " + AuthIT.hash("secret-ops") + ", tenants: ['*'], roles: [decide, read, admin]}]";
    s = TestServer.start(RULES, Map.of("apiKeys", keys, "metrics.maxTenants", "3", "metrics.maxRulesPerTenant", "2",
        // longer than RawHttp's 30 s read deadline: a server that waited for the body would fail the test
        "http.requestTimeout", "60s"));
    for (int i = 0; i < 3; i++) {
      s.as("secret-b").decide("{\"tenant\": \"shop-b\", \"recipient\": \"shared-name\"}");
      s.as("secret-as").decide("{\"tenant\": \"shop-a\", \"recipient\": \"shared-name\"}");
    }
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  @Test
  void aReadKeyOfOneTenantSeesNothingOfAnother() {
    TestServer a = s.as("secret-ar");
    String metrics = a.get("/metrics").raw().body();
    assertThat(metrics).contains("tenant=\"shop-a\"").doesNotContain("shop-b").doesNotContain("b-secret-rule");
    // nor the server-wide series, which sum over every tenant
    assertThat(metrics.lines().filter(l -> !l.startsWith("#"))).allMatch(l -> l.contains("tenant=\"shop-a\""));
    for (String path : new String[] {"/v1/rules?tenant=shop-b", "/v1/rules/b-secret-rule?tenant=shop-b",
        "/v1/rules/history?tenant=shop-b", "/v1/recipients/shared-name?tenant=shop-b"}) {
      TestServer.Reply r = a.get(path);
      assertThat(r.status()).as(path).isEqualTo(403);
      assertThat(r.raw().body()).as(path).doesNotContain("b-secret-rule");
    }
    TestServer.Reply validate = a.post("/v1/rules/validate?tenant=shop-b", "{\"rules\": []}");
    assertThat(validate.status()).isEqualTo(403);
    // the same recipient name in shop-a shows shop-a's counters and denials only
    TestServer.Reply inspect = a.get("/v1/recipients/shared-name?tenant=shop-a");
    assertThat(inspect.status()).isEqualTo(200);
    assertThat(inspect.raw().body()).contains("a-per-minute").doesNotContain("b-secret-rule");
    assertThat(inspect.body().get("recentDenials").get(0).get("blockedBy").toString()).contains("a-per-minute");
    // an admin key of every tenant sees both
    assertThat(s.as("secret-ops").get("/metrics").raw().body()).contains("shop-a").contains("shop-b");
    s.as(null);
  }

  @Test
  void tenantAndRuleLabelsAreBounded() {
    for (int i = 0; i < 40; i++) {
      s.as("secret-ops").decide("{\"tenant\": \"t" + i + "\", \"recipient\": \"r\"}");
    }
    String metrics = s.as("secret-ops").get("/metrics").raw().body();
    Set<String> tenants = metrics.lines().filter(l -> l.startsWith("fcap_decisions_total{"))
        .map(l -> l.replaceAll(".*tenant=\"([^\"]*)\".*", "$1")).collect(Collectors.toSet());
    assertThat(tenants).hasSize(4).contains("_other", "shop-a", "shop-b");
    double other = metrics.lines().filter(l -> l.startsWith("fcap_decisions_total{") && l.contains("\"_other\""))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    assertThat(other).isEqualTo(39.0); // the third tenant took the last slot
    s.as(null);
  }

  @Test
  void refusedKeysAreCountedAndRefusedBeforeTheBodyIsRead() {
    for (int i = 0; i < 3; i++) {
      assertThat(s.as("wrong-" + i).decide("{\"recipient\": \"r\", \"tenant\": \"shop-a\"}").status()).isEqualTo(401);
    }
    // a slow body without a key is refused on its headers: no waiting for the body, no timeout
    RawHttp.Response r = RawHttp.send(s.server.port(), "POST", "/v1/decisions",
        Map.of("Content-Type", "application/json", "Content-Length", "100"), "{");
    assertThat(r.status()).isEqualTo(401);
    String metrics = s.as("secret-ops").get("/metrics").raw().body();
    assertThat(metrics).contains("fcap_auth_failures_total{reason=\"unknown\"} 3.0")
        .contains("fcap_auth_failures_total{reason=\"missing\"}");
    s.as(null);
  }
}
