package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Policy versions only go up, across API edits, hand edits of the rules file and restarts; an
 * {@code If-Match} of any version but the current one is refused; the history survives restarts; a
 * rule change's audit event holds the before and after of each rule it changed.
 */
class RuleVersionsIT {
  static final String RULES = """
      policies:
        - tenant: default
          version: 1
          rules:
            - {id: per-minute, limit: 3, window: 1m, key: [recipient]}
            - {id: per-day, limit: 50, window: 24h, key: [recipient]}
      """;
  static final String PER_DAY_40 = "{\"limit\": 40, \"window\": \"24h\", \"key\": [\"recipient\"]}";

  @Test
  void versionsOnlyGoUpAcrossApiEditsHandEditsAndRestarts() throws Exception {
    Path file;
    List<Path> audits = new ArrayList<>();
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      file = s.dir.resolve("rules.yaml");
      audits.add(s.dir.resolve("audit.admin.jsonl"));
      assertThat(version(s)).isEqualTo(1);
      assertThat(s.put("/v1/rules/per-day", PER_DAY_40, Map.of("If-Match", "\"1\"")).status()).isEqualTo(200);
      assertThat(version(s)).isEqualTo(2);

      // a hand edit: the file still says version 2, the server gives it 3
      String handEdited = Files.readString(file).replace("limit: 3", "limit: 7");
      assertThat(handEdited).contains("version: 2");
      Files.writeString(file, handEdited);
      awaitVersion(s, 3);
      assertThat(s.put("/v1/rules/per-day", PER_DAY_40, Map.of("If-Match", "\"2\"")).status()).isEqualTo(412);
    }

    try (TestServer s = TestServer.start(null, Map.of("rules.source", file.toString()))) {
      audits.add(s.dir.resolve("audit.admin.jsonl"));
      assertThat(version(s)).as("the hand edit's version after a restart").isEqualTo(3);
      assertThat(s.get("/v1/rules/per-minute").body().get("limit").asLong()).isEqualTo(7);
      TestServer.Reply stale = s.put("/v1/rules/per-minute", "{\"limit\": 1, \"window\": \"1m\", \"key\": [\"recipient\"]}",
          Map.of("If-Match", "\"2\""));
      assertThat(stale.status()).isEqualTo(412);
      assertThat(stale.errorCode()).isEqualTo("version_conflict");
      assertThat(s.put("/v1/rules/per-minute", "{\"limit\": 5, \"window\": \"1m\", \"key\": [\"recipient\"]}",
          Map.of("If-Match", "\"3\"")).status()).isEqualTo(200);
      assertThat(version(s)).isEqualTo(4);
    }

    // edited while the server is down, version left as it was: one more version at the start
    Files.writeString(file, Files.readString(file).replace("limit: 5", "limit: 6"));
    try (TestServer s = TestServer.start(null, Map.of("rules.source", file.toString()))) {
      audits.add(s.dir.resolve("audit.admin.jsonl"));
      assertThat(version(s)).isEqualTo(5);
      assertThat(s.get("/v1/rules/per-minute").body().get("limit").asLong()).isEqualTo(6);

      JsonNode history = s.get("/v1/rules/history").body().get("changes");
      List<String> actions = new ArrayList<>();
      history.forEach(c -> actions.add(c.get("version").asLong() + ":" + c.get("action").asText() + ":"
          + c.get("who").asText()));
      assertThat(actions).as("the history survives restarts")
          .containsExactly("5:reload:file", "4:update:local", "3:reload:file", "2:update:local", "1:load:startup");
    }

    // every version is audited once, each with the before and after of what it changed
    Set<Long> versions = new HashSet<>();
    List<JsonNode> events = new ArrayList<>();
    for (Path audit : audits) {
      awaitFile(audit);
      for (String line : Files.readAllLines(audit)) {
        JsonNode e = TestServer.JSON.readTree(line);
        if (e.path("type").asText().equals("rules")) {
          assertThat(versions.add(e.get("policyVersion").asLong())).as("one event per version: " + line).isTrue();
          events.add(e);
        }
      }
    }
    assertThat(versions).containsExactlyInAnyOrder(1L, 2L, 3L, 4L, 5L);
    JsonNode update = events.stream().filter(e -> e.get("policyVersion").asLong() == 2).findFirst().orElseThrow();
    assertThat(update.get("changes")).hasSize(1);
    assertThat(update.get("changes").get(0).get("rule").asText()).isEqualTo("per-day");
    assertThat(update.get("changes").get(0).get("before").get("limit").asLong()).isEqualTo(50);
    assertThat(update.get("changes").get(0).get("after").get("limit").asLong()).isEqualTo(40);
    JsonNode hand = events.stream().filter(e -> e.get("policyVersion").asLong() == 3).findFirst().orElseThrow();
    assertThat(hand.get("changes").get(0).get("rule").asText()).isEqualTo("per-minute");
    assertThat(hand.get("changes").get(0).get("before").get("limit").asLong()).isEqualTo(3);
    assertThat(hand.get("changes").get(0).get("after").get("limit").asLong()).isEqualTo(7);
  }

  @Test
  void aDeletedRuleHasNoAfterAndAnAddedOneNoBefore() throws Exception {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      s.delete("/v1/rules/per-day");
      s.post("/v1/rules", "{\"id\": \"per-hour\", \"limit\": 9, \"window\": \"1h\", \"key\": [\"recipient\"]}");
      JsonNode[] byVersion = new JsonNode[4];
      Path audit = s.dir.resolve("audit.admin.jsonl");
      Awaitility.await("both changes in " + audit).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
          .pollInSameThread().until(() -> {
            if (Files.exists(audit)) {
              for (String line : Files.readAllLines(audit)) {
                JsonNode e = TestServer.JSON.readTree(line);
                if (e.path("type").asText().equals("rules")) {
                  byVersion[(int) e.get("policyVersion").asLong()] = e;
                }
              }
            }
            return byVersion[3] != null;
          });
      assertThat(byVersion[2].get("changes").get(0).get("rule").asText()).isEqualTo("per-day");
      assertThat(byVersion[2].get("changes").get(0).get("after").isNull()).isTrue();
      assertThat(byVersion[3].get("changes").get(0).get("before").isNull()).isTrue();
      assertThat(byVersion[3].get("changes").get(0).get("after").get("limit").asLong()).isEqualTo(9);
    }
  }

  private static long version(TestServer s) {
    return s.get("/v1/rules").body().get("version").asLong();
  }

  private static void awaitVersion(TestServer s, long version) {
    Awaitility.await("version " + version).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
        .pollInSameThread().until(() -> version(s) == version);
  }

  private static void awaitFile(Path file) {
    Awaitility.await(file + " written").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
        .pollInSameThread().until(() -> Files.exists(file));
  }
}
