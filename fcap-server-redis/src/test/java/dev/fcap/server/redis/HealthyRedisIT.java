package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.redis.testing.RedisExtension;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Load is not an outage: on a healthy Redis, big concurrent batches and cold nodes are decided by Redis
 * (never degraded) and exactly (the seed policy's 15 per minute per recipient).
 */
class HealthyRedisIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  /** The product defaults for the deadline and the outage window, not the test harness's. */
  private static final Map<String, String> DEFAULTS = Map.of("store.timeout", "500ms", "failure.window", "1s");
  /** Times a client sends a busy request again at most (each after the documented Retry-After). */
  private static final int RETRY_ROUNDS = 30;
  /**
   * For the big batches: a deadline that a cold server on this shared 2-core machine (load average
   * often above 10) meets. What is tested is exactness, no outage and no fallback; that a slow call is
   * busy and not an outage is traced in FailoverStoreTest, and the default deadline's figures under
   * load are in docs/benchmarks.md ({@code fcap bench}).
   */
  private static final Map<String, String> GENEROUS = Map.of("store.timeout", "5s", "failure.window", "1s");

  @Test
  void fourConcurrentBatchesOfTenThousandAreDecidedByRedisExactly() throws Exception {
    try (Node node = Node.onRedis(REDIS.uri(), "healthy:rules", "healthy:audit", GENEROUS)) {
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<JsonNode>> replies = new ArrayList<>();
        for (int b = 0; b < 4; b++) {
          String batch = batch("b" + b);
          replies.add(pool.submit(() -> {
            Node.Reply r = node.send("POST", "/v1/decisions/batch", batch, Map.of());
            assertThat(r.status()).as("batch status").isEqualTo(200);
            return r.body().get("results");
          }));
        }
        int degraded = 0;
        int errors = 0;
        Map<String, Integer> admitted = new HashMap<>();
        for (int b = 0; b < 4; b++) {
          JsonNode results = replies.get(b).get(120, TimeUnit.SECONDS);
          assertThat(results.size()).isEqualTo(10_000);
          for (int i = 0; i < results.size(); i++) {
            JsonNode d = results.get(i);
            if (d.has("error")) {
              errors++;
              continue;
            }
            degraded += d.get("degraded").asBoolean() ? 1 : 0;
            if (d.get("allowed").asBoolean()) {
              admitted.merge("b" + b + "-r" + (i % 625), 1, Integer::sum);
            }
          }
        }
        assertThat(errors).as("items refused as busy or unavailable").isZero();
        assertThat(degraded).as("degraded decisions on a healthy Redis").isZero();
        assertThat(admitted).hasSize(4 * 625);
        assertThat(admitted.values()).allMatch(n -> n == 15);
        assertThat(node.server.failover().outages()).isZero();
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /**
   * A batch slower than {@code http.requestTimeout} (Redis paused 1.5 s by {@code CLIENT PAUSE}, the
   * request timeout 1 s, the store deadline 2 s per call) answers its items: a 408 there would tell
   * the client nothing was decided while the items were counted. Whatever each item's answer, Redis
   * counts exactly the admissions the client was told about.
   */
  @Test
  void aBatchSlowerThanTheRequestTimeoutAnswersItsItems() throws Exception {
    Map<String, String> settings = Map.of("http.requestTimeout", "1s", "store.timeout", "2s", "store.callSize", "1");
    try (Node node = Node.onRedis(REDIS.uri(), "slow:rules", "slow:audit", settings)) {
      String recipient = "slow-" + System.nanoTime();
      String batch = "{\"requests\": [{\"recipient\": \"" + recipient + "\", \"content\": \"a\"}, "
          + "{\"recipient\": \"" + recipient + "\", \"content\": \"b\"}]}";
      REDIS.deployment().servers().get(0).call("CLIENT", "PAUSE", "1500", "ALL");
      Node.Reply r = node.send("POST", "/v1/decisions/batch", batch, Map.of());
      assertThat(r.status()).as("%s", r.body()).isEqualTo(200);
      int admitted = 0;
      for (JsonNode d : r.body().get("results")) {
        if (d.has("error")) {
          assertThat(d.get("error").get("code").asText()).isEqualTo("store_busy");
        } else {
          assertThat(d.get("degraded").asBoolean()).isFalse();
          admitted += d.get("allowed").asBoolean() ? 1 : 0;
        }
      }
      int told = admitted;
      long[] used = new long[1];
      OutageEpisodesIT.await("Redis to count what the client was told", () -> {
        used[0] = node.get("/v1/recipients/" + recipient).body().get("counters").get(0).get("used").asLong();
        return used[0] == told;
      });
    }
  }

  /** 625 recipients asked 16 times each with distinct contents: only recipient-per-minute can refuse. */
  private static String batch(String name) {
    StringBuilder b = new StringBuilder("{\"requests\": [");
    for (int k = 0; k < 16; k++) {
      for (int r = 0; r < 625; r++) {
        b.append(k + r == 0 ? "" : ",").append("{\"recipient\": \"").append(name).append("-r").append(r)
            .append("\", \"content\": \"m").append(k).append("\"}");
      }
    }
    return b.append("]}").toString();
  }

  @Test
  void twoFreshlyStartedNodesAdmitExactlyTheLimit() throws Exception {
    for (int round = 0; round < 2; round++) {
      // both nodes start cold (new connections, no JIT) and are asked at once: 64 concurrent requests
      try (Node a = Node.onRedis(REDIS.uri(), "cold:rules", "cold:audit", DEFAULTS);
          Node b = Node.onRedis(REDIS.uri(), "cold:rules", "cold:audit", DEFAULTS)) {
        String recipient = "cold-" + round + "-" + System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(64);
        try {
          List<Future<Node.Reply>> replies = new ArrayList<>();
          for (int i = 0; i < 64; i++) {
            Node node = i % 2 == 0 ? a : b;
            String body = "{\"recipient\": \"" + recipient + "\", \"content\": \"c" + i + "\"}";
            replies.add(pool.submit(() -> decideUntilDecided(node, body)));
          }
          int admitted = 0;
          for (Future<Node.Reply> f : replies) {
            Node.Reply r = f.get(120, TimeUnit.SECONDS);
            assertThat(r.status()).as("round %d: %s", round, r.body()).isEqualTo(200);
            assertThat(r.degraded()).isFalse();
            admitted += r.allowed() ? 1 : 0;
          }
          assertThat(admitted).as("round %d", round).isEqualTo(15);
        } finally {
          pool.shutdownNow();
        }
      }
    }
  }

  /**
   * One decision as a client honouring backpressure asks it: a 429 {@code store_busy} (a call past the
   * deadline, which a cold node on a loaded machine may miss: nothing recorded, a late admission is
   * released) is sent again after the documented Retry-After (1 s), at most {@link #RETRY_ROUNDS}
   * times. Load then makes the test slower, never a different answer: still exactly 15, 0 degraded.
   */
  private static Node.Reply decideUntilDecided(Node node, String body) throws InterruptedException {
    for (int round = 0; round < RETRY_ROUNDS; round++) {
      Node.Reply r = node.decide(body);
      if (r.status() != 429) {
        return r;
      }
      assertThat(r.body().get("error").get("code").asText()).isEqualTo("store_busy");
      Thread.sleep(1000); // the documented Retry-After: a client's pacing, not a condition
    }
    throw new AssertionError("still busy after " + RETRY_ROUNDS + " rounds: " + body);
  }
}
