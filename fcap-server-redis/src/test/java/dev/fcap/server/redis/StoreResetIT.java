package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.redis.testing.RedisExtension;
import dev.fcap.store.redis.testing.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A real Redis without persistence killed (SIGKILL) and restarted at once under a running node: it
 * comes back empty. The node notices by the store's identity key at its next probe, says so in the
 * log, {@code fcap_store_resets_total} and {@code /ready}, and then decides as {@code failure.storeReset}
 * says: on the emptied store ({@code decide}), or by the failure policy until the longest window of the
 * rules has passed ({@code policy}).
 */
class StoreResetIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  private Path dir;

  @BeforeEach
  void files() throws IOException {
    dir = Files.createTempDirectory("fcap-reset");
  }

  @AfterEach
  void restartIfDown() throws IOException {
    RedisServer redis = REDIS.deployment().servers().get(0);
    if (!redis.isRunning()) {
      redis.restart();
    }
  }

  /** A node on the Redis (keys under {@code name:}), rules from a file seeded with {@code rule}, audit to a file. */
  private Node node(String name, String rule, Map<String, String> extra) throws IOException {
    Path seed = dir.resolve("seed.yaml");
    Files.writeString(seed, """
        policies:
          - tenant: default
            rules:
              - %s
        """.formatted(rule));
    Map<String, String> s = new HashMap<>(Map.of("store.timeout", "200ms", "failure.window", "500ms",
        "failure.probeInterval", "100ms", "rules.seed", seed.toString(),
        "rules.source", dir.resolve("rules.yaml").toString(), "audit.sink", "file:" + dir.resolve("audit.jsonl")));
    s.putAll(extra);
    return Node.onRedis(REDIS.uri() + "?prefix=" + name + ":", name + ":rules", name + ":audit", s);
  }

  private static String to(String recipient) {
    return "{\"recipient\": \"" + recipient + "\"}";
  }

  private static void await(String what, BooleanSupplier condition) {
    Awaitility.await(what).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).pollInSameThread()
        .until(condition::getAsBoolean);
  }

  /** Uses {@code recipient}'s quota of {@code limit} on the store: then the store refuses it. */
  private static void useTheQuota(Node node, String recipient, int limit) {
    for (int i = 0; i < limit; i++) {
      assertThat(node.decide(to(recipient)).allowed()).isTrue();
    }
    Node.Reply refused = node.decide(to(recipient));
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.degraded()).isFalse();
  }

  /** kill -9 and an immediate restart: a Redis without persistence comes back empty. Returns when it answers. */
  private static long restartEmpty() throws IOException {
    RedisServer redis = REDIS.deployment().servers().get(0);
    redis.kill();
    redis.restart();
    return System.currentTimeMillis();
  }

  private static JsonNode ready(Node node) {
    return node.get("/ready").body();
  }

  private static double metric(Node node, String name) {
    for (String line : node.text("/metrics").split("\n")) {
      if (line.startsWith(name + " ")) {
        return Double.parseDouble(line.substring(name.length() + 1).trim());
      }
    }
    throw new AssertionError("no metric " + name);
  }

  @Test
  void decideAsUsualNoticesTheLossAndSaysSo() throws Exception {
    try (Node node = node("reset-decide", "{id: per-hour, limit: 5, window: 1h, key: [recipient]}", Map.of())) {
      useTheQuota(node, "r", 5);
      assertThat(ready(node).get("storeResets").asLong()).isZero();
      assertThat(ready(node).has("storeLastReset")).isFalse();
      assertThat(metric(node, "fcap_store_resets_total")).isZero();

      long restarted = restartEmpty();
      await("the loss noticed", () -> node.server.failover().resets() > 0);
      System.out.printf("decide: loss noticed %d ms after the restarted Redis answered (probe every 100 ms)%n",
          node.server.failover().lastReset().noticedAt() - restarted);

      Node.Reply ready = node.get("/ready");
      assertThat(ready.status()).as("the store answers: ready").isEqualTo(200);
      assertThat(ready.body().get("storeResets").asLong()).isEqualTo(1);
      assertThat(ready.body().get("storeLastReset").get("detail").asText())
          .contains("reset-decide:identity").contains("missing");
      assertThat(ready.body().has("storeResetPolicyUntil")).isFalse();
      assertThat(metric(node, "fcap_store_resets_total")).isEqualTo(1.0);
      assertThat(metric(node, "fcap_store_reset_policy")).isZero();

      Node.Reply fresh = node.decide(to("r"));
      assertThat(fresh.degraded()).as("decided by the store, as usual").isFalse();
      assertThat(fresh.allowed()).as("the emptied store counts from zero: the cost of decide").isTrue();
      await("later probes find the identity written anew", () -> metric(node, "fcap_store_resets_total") == 1.0);
    }
  }

  @Test
  void failurePolicyDecidesUntilTheLongestWindowHasPassed() throws Exception {
    try (Node node = node("reset-policy", "{id: per-3s, limit: 3, window: 3s, key: [recipient]}",
        Map.of("failure.storeReset", "policy", "failure.default", "deny"))) {
      useTheQuota(node, "r", 3);
      restartEmpty();
      await("the loss noticed", () -> node.server.failover().resets() > 0);

      JsonNode ready = ready(node);
      assertThat(ready.get("ready").asBoolean()).isTrue();
      assertThat(ready.get("storeDown").asBoolean()).isFalse();
      long until = ready.get("storeResetPolicyUntil").asLong();
      long noticed = ready.get("storeLastReset").get("noticedAt").asLong();
      assertThat(until - noticed).as("the longest window of the rules").isEqualTo(3000);
      assertThat(metric(node, "fcap_store_reset_policy")).isEqualTo(1.0);

      Node.Reply denied = node.decide(to("r"));
      assertThat(denied.allowed()).as("failure.default: deny").isFalse();
      assertThat(denied.degraded()).isTrue();
      assertThat(denied.body().get("degradedReason").asText()).isEqualTo("store_reset");
      assertThat(denied.body().get("retryAfterMs").asLong()).isPositive().isLessThanOrEqualTo(3000);
      Node.Reply transactional = node.decide("{\"recipient\": \"r\", \"category\": \"transactional\"}");
      assertThat(transactional.allowed()).as("transactional: allow").isTrue();
      assertThat(transactional.degraded()).isTrue();

      AtomicInteger degraded = new AtomicInteger();
      await("decisions on the store again", () -> {
        Node.Reply r = node.decide(to("r"));
        if (r.degraded()) {
          degraded.incrementAndGet();
          return false;
        }
        assertThat(System.currentTimeMillis()).as("not before the longest window has passed").isGreaterThanOrEqualTo(until);
        assertThat(r.allowed()).isTrue();
        return true;
      });
      assertThat(degraded.get()).isPositive();
      assertThat(ready(node).has("storeResetPolicyUntil")).isFalse();
      assertThat(metric(node, "fcap_store_reset_policy")).isZero();
      assertThat(metric(node, "fcap_store_resets_total")).isEqualTo(1.0);
    }
  }

  /**
   * The episode as an operator saw it: 15 per minute per recipient, decisions every 20 ms per
   * recipient, three kill -9 and immediate restarts 3 s apart (the first after 2 s); admissions per
   * recipient over the 12 s, with each choice of {@code failure.storeReset} (failure.default deny).
   * Prints the figures.
   */
  @Test
  void theEpisode() throws Exception {
    Map<String, Map<String, Integer>> admitted = new TreeMap<>();
    for (String choice : new String[] {"decide", "policy"}) {
      try (Node node = node("episode-" + choice, "{id: per-minute, limit: 15, window: 1m, key: [recipient]}",
          Map.of("failure.storeReset", choice, "failure.default", "deny"))) {
        Map<String, Integer> counts = new TreeMap<>();
        long start = System.nanoTime();
        int restarts = 0;
        for (int i = 0; i < 1000 && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(12); i++) {
          long at = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
          if (restarts < 3 && at >= 2000 + 3000L * restarts) {
            restartEmpty();
            restarts++;
          }
          for (int r = 0; r < 4; r++) {
            Node.Reply reply = node.decide(to("e" + r));
            if (reply.status() == 200 && reply.allowed()) {
              counts.merge("e" + r, 1, Integer::sum);
            }
          }
          Thread.sleep(20); // the pace of the load, not a condition
        }
        await("every loss noticed", () -> node.server.failover().resets() >= 1);
        admitted.put(choice, counts);
        System.out.printf("episode, failure.storeReset: %s: admitted per recipient %s under 15/min; "
            + "losses noticed %d%n", choice, counts, node.server.failover().resets());
        if (choice.equals("policy")) {
          assertThat(counts.values()).as("the failure policy decided after the first loss noticed")
              .allMatch(n -> n < 2 * 15);
        }
      }
    }
    assertThat(admitted.get("decide").values()).as("the emptied store hands out fresh quotas").allMatch(n -> n > 15);
  }
}
