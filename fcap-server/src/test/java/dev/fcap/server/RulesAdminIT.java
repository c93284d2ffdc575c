package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.policy.PolicyParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Rule administration over HTTP: validation, versions, persistence, hot reload, history, edits under load. */
class RulesAdminIT {
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - {id: per-minute, limit: 3, window: 1m, key: [recipient]}
      """;

  @Test
  void listReplaceWithIfMatchAddEditDeleteAndHistory() throws Exception {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      TestServer.Reply list = s.get("/v1/rules");
      assertThat(list.body().get("version").asLong()).isEqualTo(1);
      assertThat(list.raw().headers().firstValue("etag")).contains("\"1\"");
      assertThat(list.body().get("rules").get(0).get("id").asText()).isEqualTo("per-minute");

      String two = "{\"rules\": [{\"id\": \"per-minute\", \"limit\": 5, \"window\": \"1m\", \"key\": [\"recipient\"]},"
          + " {\"id\": \"per-day\", \"limit\": 50, \"window\": \"24h\", \"key\": [\"recipient\"]}]}";
      TestServer.Reply stale = s.put("/v1/rules", two, Map.of("If-Match", "\"7\""));
      assertThat(stale.status()).isEqualTo(412);
      assertThat(stale.errorCode()).isEqualTo("version_conflict");
      TestServer.Reply replaced = s.put("/v1/rules", two, Map.of("If-Match", "\"1\""));
      assertThat(replaced.status()).isEqualTo(200);
      assertThat(replaced.body().get("version").asLong()).isEqualTo(2);

      TestServer.Reply added = s.post("/v1/rules", "{\"id\": \"content\", \"limit\": 2, \"window\": \"59s\", "
          + "\"key\": [\"recipient\", \"content\"]}");
      assertThat(added.status()).isEqualTo(201);
      assertThat(added.body().get("rules")).hasSize(3);
      assertThat(s.post("/v1/rules", "{\"id\": \"content\", \"limit\": 2, \"window\": \"59s\", \"key\": [\"recipient\"]}")
          .status()).isEqualTo(409);

      TestServer.Reply edited = s.put("/v1/rules/per-day", "{\"limit\": 40, \"window\": \"24h\", \"key\": [\"recipient\"],"
          + " \"mode\": \"shadow\"}", Map.of());
      assertThat(edited.body().get("version").asLong()).isEqualTo(4);
      assertThat(s.get("/v1/rules/per-day").body().get("mode").asText()).isEqualTo("shadow");

      assertThat(s.delete("/v1/rules/content").body().get("rules")).hasSize(2);
      assertThat(s.delete("/v1/rules/content").status()).isEqualTo(404);

      // live on the next decision
      JsonNode d = s.decide("{\"recipient\": \"r\"}").body();
      assertThat(d.get("policyVersion").asLong()).isEqualTo(5);
      assertThat(d.get("rules").get(0).get("limit").asLong()).isEqualTo(5);

      // persisted
      Path file = s.dir.resolve("rules.yaml");
      var persisted = PolicyParser.parseFile(file).get(0);
      assertThat(persisted.version()).isEqualTo(5);
      assertThat(persisted.rule("per-day").orElseThrow().limit()).isEqualTo(40);

      JsonNode history = s.get("/v1/rules/history").body().get("changes");
      List<String> actions = new ArrayList<>();
      history.forEach(c -> actions.add(c.get("version").asLong() + ":" + c.get("action").asText()));
      assertThat(actions).containsExactly("5:delete", "4:update", "3:add", "2:replace", "1:load");
      assertThat(history.get(0).get("who").asText()).isEqualTo("local");
    }
  }

  @Test
  void invalidChangeIsRefusedWholeWithRuleAndField() {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      String bad = "{\"rules\": [{\"id\": \"ok\", \"limit\": 5, \"window\": \"1m\", \"key\": [\"recipient\"]},"
          + " {\"id\": \"broken\", \"limit\": -1, \"window\": \"soon\", \"key\": [\"recipient\"]}]}";
      TestServer.Reply r = s.put("/v1/rules", bad, Map.of());
      assertThat(r.status()).isEqualTo(400);
      assertThat(r.errorCode()).isEqualTo("invalid_policy");
      JsonNode errors = r.body().get("error").get("errors");
      List<String> where = new ArrayList<>();
      errors.forEach(e -> where.add(e.get("rule").asText() + "." + e.get("field").asText()));
      assertThat(where).containsExactlyInAnyOrder("broken.limit", "broken.window");
      assertThat(s.get("/v1/rules").body().get("version").asLong()).isEqualTo(1);
      assertThat(s.get("/v1/rules").body().get("rules")).hasSize(1);

      TestServer.Reply validate = s.post("/v1/rules/validate", bad);
      assertThat(validate.status()).isEqualTo(400);
      assertThat(validate.errorField()).isIn("limit", "window");
      TestServer.Reply valid = s.post("/v1/rules/validate", "{\"rules\": []}");
      assertThat(valid.body().get("valid").asBoolean()).isTrue();
      // a null list is no list: refused, not read as "delete every rule"
      for (String nothing : List.of("{\"rules\": null}", "{}")) {
        TestServer.Reply wiped = s.put("/v1/rules", nothing, Map.of());
        assertThat(wiped.status()).as(nothing).isEqualTo(400);
        assertThat(wiped.errorCode()).isEqualTo("invalid_policy");
        assertThat(s.post("/v1/rules/validate", nothing).status()).as(nothing).isEqualTo(400);
      }
      assertThat(s.get("/v1/rules").body().get("rules")).hasSize(1);
      assertThat(s.get("/v1/rules").body().get("version").asLong()).isEqualTo(1);
      assertThat(s.post("/v1/rules", "{\"id\": \"x\", \"limit\": 1, \"window\": \"1m\", \"key\": [\"recipient\"], "
          + "\"colour\": \"red\"}").errorField()).isEqualTo("colour");
    }
  }

  @Test
  void handEditsOfTheFileAreReloaded() throws Exception {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      Path file = s.dir.resolve("rules.yaml");
      Files.writeString(file, RULES.replace("limit: 3", "limit: 9"));
      long version = Awaitility.await("the edit is reloaded").atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(50)).pollInSameThread()
          .until(() -> s.get("/v1/rules").body().get("version").asLong(), v -> v != 1);
      assertThat(version).isEqualTo(2);
      assertThat(s.get("/v1/rules").body().get("rules").get(0).get("limit").asLong()).isEqualTo(9);
      assertThat(s.get("/v1/rules/history").body().get("changes").get(0).get("who").asText()).isEqualTo("file");

      // an invalid hand edit is refused, visibly (so this fails if the watcher never looked): the rules in force stay
      Files.writeString(file, RULES.replace("limit: 3", "limit: nine"));
      JsonNode rules = Awaitility.await("the invalid edit is refused").atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50)).pollInSameThread()
          .until(() -> s.get("/v1/rules").body(), r -> r.has("rejectedEdit"));
      assertThat(rules.path("rejectedEdit").path("errors").get(0).path("field").asText()).isEqualTo("limit");
      assertThat(rules.get("version").asLong()).isEqualTo(2);
      assertThat(rules.get("rules").get(0).get("limit").asLong()).isEqualTo(9);
      assertThat(s.get("/metrics").raw().body()).contains("fcap_rules_rejected_edit 1.0")
          .contains("fcap_rules_reload_failures_total 1.0");
      // the body of GET may be sent back as it is
      assertThat(s.put("/v1/rules", rules.toString(), Map.of()).status()).isEqualTo(200);
      assertThat(s.get("/v1/rules").body().has("rejectedEdit")).isFalse();
    }
  }

  /** An invalid hand edit used to stay on disk and fail the next start. */
  @Test
  void aRestartWithAnInvalidFileStartsOnTheLastGoodVersion() throws Exception {
    Path file;
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      file = s.dir.resolve("rules.yaml");
    }
    Files.writeString(file, RULES.replace("limit: 3", "limit: nine"));
    try (TestServer s = TestServer.start(null, Map.of("rules.source", file.toString()))) {
      JsonNode rules = s.get("/v1/rules").body();
      assertThat(rules.get("rules").get(0).get("limit").asLong()).isEqualTo(3);
      assertThat(rules.path("rejectedEdit").path("errors").get(0).path("message").asText()).contains("limit");
      assertThat(s.get("/metrics").raw().body()).contains("fcap_rules_rejected_edit 1.0");
      assertThat(s.decide("{\"recipient\": \"after-restart\"}").status()).isEqualTo(200);
    }
    assertThat(Files.readString(file)).contains("limit: nine");
  }

  @Test
  void editsUnderLoadKeepCountsAndNeverFailADecision() throws Exception {
    String rules = RULES.replace("limit: 3", "limit: 1000").replace("1m", "1h");
    try (TestServer s = TestServer.start(rules, Map.of())) {
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger admitted = new AtomicInteger();
      AtomicInteger failed = new AtomicInteger();
      ExecutorService pool = Executors.newFixedThreadPool(4);
      List<CompletableFuture<Void>> load = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        load.add(CompletableFuture.runAsync(() -> {
          for (int i = 0; i < 2000 && !stop.get(); i++) {
            TestServer.Reply r = s.decide("{\"recipient\": \"load\"}");
            if (r.status() != 200) {
              failed.incrementAndGet();
            } else if (r.body().get("allowed").asBoolean()) {
              admitted.incrementAndGet();
            }
          }
        }, pool));
      }
      for (int v = 0; v < 10; v++) {
        long limit = 1000 + v;
        TestServer.Reply r = s.put("/v1/rules/per-minute", "{\"limit\": " + limit + ", \"window\": \"1h\", "
            + "\"key\": [\"recipient\"]}", Map.of());
        assertThat(r.status()).isEqualTo(200);
      }
      stop.set(true);
      CompletableFuture.allOf(load.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
      pool.shutdown();
      assertThat(failed.get()).isZero();
      assertThat(s.get("/v1/rules").body().get("version").asLong()).isEqualTo(11);
      // every admitted decision is still counted after ten edits
      assertThat(s.get("/v1/recipients/load").body().get("counters").get(0).get("used").asLong())
          .isEqualTo(admitted.get());
    }
  }
}
