package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyParser;
import dev.fcap.server.ConfigLoader;
import dev.fcap.server.ServerConfig;
import dev.fcap.server.admin.RulesConflictException;
import dev.fcap.server.admin.RulesSource;
import dev.fcap.store.redis.testing.RedisExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis rules source on its own: seed, compare-and-set, notification, history, hand edits, loss. */
class RedisRulesSourceIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  private static final String SEED = """
      policies:
        - tenant: default
          rules:
            - {id: per-minute, limit: 3, window: 1m, key: [recipient]}
      """;

  private static RulesSource open(String key, int history) throws Exception {
    Path seed = Files.createTempFile("fcap-seed", ".yaml");
    Files.writeString(seed, SEED);
    ServerConfig config = ConfigLoader.load(null, Map.of(), Map.of("rules.seed", seed.toString(), "rules.history",
        Integer.toString(history)));
    return new RedisStoreProvider().rulesSource(REDIS.uri() + "?key=" + key, config).orElseThrow();
  }

  private static RedisEndpoint.Link redis() {
    return RedisEndpoint.parse("test", REDIS.uri(), Set.of()).connect(Duration.ofSeconds(5), Duration.ofSeconds(5));
  }

  private static List<Policy> withLimit(long limit, long version) {
    String yaml = "policies:\n  - tenant: default\n    rules:\n      - {id: per-minute, limit: " + limit
        + ", window: 1m, key: [recipient]}\n";
    return List.of(PolicyParser.parse(yaml).get(0).withVersion(version));
  }

  @Test
  void twoNodesCannotBothApplyAnEditFromTheSameVersion() throws Exception {
    try (RulesSource one = open("cas:rules", 10); RulesSource two = open("cas:rules", 10)) {
      List<Policy> seen1 = one.load();
      List<Policy> seen2 = two.load();
      assertThat(seen1).isEqualTo(seen2);
      assertThat(seen1.get(0).version()).isEqualTo(1);

      one.save(withLimit(5, 2));
      assertThatThrownBy(() -> two.save(withLimit(7, 2))).isInstanceOf(RulesConflictException.class)
          .hasMessageContaining("another node");
      // the first edit stands, whole
      assertThat(one.load().get(0).rule("per-minute").orElseThrow().limit()).isEqualTo(5);

      // the second node learns of it through the watch, and can then edit on top of it
      LinkedBlockingQueue<List<Policy>> changes = new LinkedBlockingQueue<>();
      two.watch(changes::add);
      List<Policy> delivered = changes.poll(10, TimeUnit.SECONDS);
      assertThat(delivered).isNotNull();
      assertThat(delivered.get(0).version()).isEqualTo(2);
      assertThat(delivered.get(0).rule("per-minute").orElseThrow().limit()).isEqualTo(5);
      saveRetryingOnConflict(two, withLimit(7, 3));
      assertThat(one.load().get(0).version()).isEqualTo(3);
      // a node's own save is not handed back to it
      assertThat(changes.poll(600, TimeUnit.MILLISECONDS)).isNull();
    }
  }

  /**
   * Right after a change is handed on, the source may still refuse an edit for a moment (it moves its
   * base only once the node has applied the change); a client rereads and retries, as on a 409.
   */
  private static void saveRetryingOnConflict(RulesSource source, List<Policy> policies) {
    Awaitility.await("a save without a conflict").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
        .pollInSameThread().ignoreException(RulesConflictException.class).until(() -> {
          source.save(policies);
          return true;
        });
  }

  @Test
  void historyIsBoundedAndNewestFirst() throws Exception {
    try (RulesSource source = open("hist:rules", 3); RedisEndpoint.Link redis = redis()) {
      source.load();
      for (int v = 2; v <= 6; v++) {
        source.save(withLimit(v * 10, v));
      }
      assertThat(redis.sync().llen("{hist:rules}:history")).isEqualTo(3);
      List<String> history = ((RedisRulesSource) source).history(10);
      JsonNode newest = Node.JSON.readTree(history.get(0));
      JsonNode oldest = Node.JSON.readTree(history.get(2));
      assertThat(newest.get("revision").asLong()).isEqualTo(oldest.get("revision").asLong() + 2);
      assertThat(newest.get("time").asLong()).isPositive();
      assertThat(newest.get("action").asText()).isEqualTo("save");
      assertThat(newest.get("node").asText()).isNotEmpty();
      assertThat(PolicyParser.parse(newest.get("yaml").asText()).get(0).rule("per-minute").orElseThrow().limit())
          .isEqualTo(60);
      assertThat(redis.sync().get("{hist:rules}:revision")).isEqualTo(newest.get("revision").asText());
    }
  }

  @Test
  void handEditsAreDeliveredInvalidOnesAreNotAndALostKeyIsWrittenBack() throws Exception {
    try (RulesSource source = open("hand:rules", 10); RedisEndpoint.Link redis = redis()) {
      source.load();
      LinkedBlockingQueue<List<Policy>> changes = new LinkedBlockingQueue<>();
      source.watch(changes::add);

      redis.sync().set("{hand:rules}", SEED.replace("limit: 3", "limit: 9"));
      List<Policy> edited = changes.poll(10, TimeUnit.SECONDS);
      assertThat(edited).isNotNull();
      assertThat(edited.get(0).rule("per-minute").orElseThrow().limit()).isEqualTo(9);

      redis.sync().set("{hand:rules}", SEED.replace("limit: 3", "limit: -1"));
      assertThat(changes.poll(1, TimeUnit.SECONDS)).isNull();
      // an edit through the source may replace the invalid document
      saveRetryingOnConflict(source, withLimit(4, 2));
      assertThat(PolicyParser.parse(redis.sync().get("{hand:rules}")).get(0).rule("per-minute").orElseThrow().limit())
          .isEqualTo(4);

      // Redis lost the key (a restart without persistence): the rules in force are written back
      redis.sync().del("{hand:rules}");
      String restored = Awaitility.await("the rules written back").atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50)).pollInSameThread()
          .until(() -> redis.sync().get("{hand:rules}"), Objects::nonNull);
      assertThat(restored).isNotNull();
      assertThat(PolicyParser.parse(restored).get(0).rule("per-minute").orElseThrow().limit()).isEqualTo(4);
      assertThat(changes).isEmpty();
    }
  }

  @Test
  void aParameterOfAnotherSettingIsRefusedByName() {
    ServerConfig config = ConfigLoader.load(null, Map.of(), Map.of());
    assertThatThrownBy(() -> new RedisStoreProvider().rulesSource(REDIS.uri() + "?stream=x", config))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rules.source")
        .hasMessageContaining("'stream'");
    assertThatThrownBy(() -> new RedisStoreProvider().auditSink(REDIS.uri() + "?maxlen=lots", config))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("audit.sink: maxlen");
  }
}
