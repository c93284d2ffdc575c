package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.redis.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two server nodes on one Redis: once a suppression PUT has answered on one node, no decision that
 * starts after it admits the recipient on either node (the entry is read in each decision's own
 * script call), while both nodes decide for that recipient without pause around the PUT. The policy
 * caps the recipient far above what the test sends, so every decision before the entry is admitted:
 * a refusal after the PUT is the entry's alone, and the recipient's count afterwards equals the
 * admissions, so no suppressed decision recorded anything. Either node pages through the list the
 * other wrote.
 */
class TwoNodesSuppressionIT {
  private static final int THREADS = 4;

  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  /** A decision as one deciding thread saw it: when it started (nanoTime), on which node, its answer. */
  private record Seen(long startedNanos, long answeredNanos, Node node, boolean allowed, JsonNode blockedBy,
      String reason) {}

  @Test
  void aSuppressedRecipientReceivesNothingOnEitherNodeTheInstantAfterThePutAnswered() throws Exception {
    try (Node a = Node.onRedis(REDIS.uri(), "sup:rules", "sup:audit", Map.of());
        Node b = Node.onRedis(REDIS.uri(), "sup:rules", "sup:audit", Map.of())) {
      Node.Reply policy = a.send("PUT", "/v1/rules", "{\"rules\": [{\"id\": \"recipient-per-day\", \"limit\": 1000000, "
          + "\"window\": \"24h\", \"key\": [\"recipient\"]}]}", Map.of());
      assertThat(policy.status()).isEqualTo(200);
      long version = policy.body().get("version").asLong();
      Awaitility.await("the policy on node B").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
          .pollInSameThread().until(() -> b.get("/v1/rules").body().get("version").asLong() == version);

      AtomicLong answered = new AtomicLong(Long.MAX_VALUE); // when the PUT answered, once it has
      CountDownLatch deciding = new CountDownLatch(THREADS); // each thread has had 20 admissions
      ExecutorService pool = Executors.newFixedThreadPool(THREADS);
      try {
        List<Future<List<Seen>>> seen = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          Node node = t % 2 == 0 ? a : b;
          int thread = t;
          seen.add(pool.submit(() -> {
            List<Seen> mine = new ArrayList<>();
            int afterPut = 0;
            // bounded: until 50 decisions started after the PUT answered, at most 5,000 in all
            for (int i = 0; i < 5_000 && afterPut < 50; i++) {
              long started = System.nanoTime();
              Node.Reply r = node.decide("{\"recipient\": \"stop\", \"channel\": \"sms\", \"content\": \"m" + thread
                  + "-" + i + "\"}");
              assertThat(r.status()).isEqualTo(200);
              assertThat(r.degraded()).isFalse();
              mine.add(new Seen(started, System.nanoTime(), node, r.allowed(), r.body().path("blockedBy"),
                  r.body().path("suppressedReason").asText(null)));
              if (i == 19) {
                deciding.countDown();
              }
              afterPut += started > answered.get() ? 1 : 0;
            }
            return mine;
          }));
        }
        assertThat(deciding.await(60, TimeUnit.SECONDS)).as("every thread deciding").isTrue();
        long sent = System.nanoTime();
        Node.Reply put = a.send("PUT", "/v1/suppressions/stop", "{\"reason\": \"replied STOP\"}", Map.of());
        answered.set(System.nanoTime());
        assertThat(put.status()).isEqualTo(200);
        int after = 0;
        long admitted = 0;
        Map<Node, Integer> admittedBeforeThePut = new HashMap<>();
        Map<Node, Integer> refusedAfter = new HashMap<>();
        for (Future<List<Seen>> f : seen) {
          for (Seen s : f.get(120, TimeUnit.SECONDS)) {
            admitted += s.allowed() ? 1 : 0;
            if (s.answeredNanos() < sent) {
              assertThat(s.allowed()).as("a decision answered before the PUT was sent: the policy never caps it")
                  .isTrue();
              admittedBeforeThePut.merge(s.node(), 1, Integer::sum);
            } else if (!s.allowed()) { // under way while the PUT was: refused by the entry, if at all
              assertThat(s.blockedBy().toString()).as("a refusal during the PUT").isEqualTo("[\"suppressed\"]");
            }
            if (s.startedNanos() > answered.get()) {
              after++;
              assertThat(s.allowed()).as("a decision that started after the PUT answered").isFalse();
              assertThat(s.blockedBy()).as("refused by the entry alone").hasSize(1);
              assertThat(s.blockedBy().get(0).asText()).isEqualTo("suppressed");
              assertThat(s.reason()).isEqualTo("replied STOP");
              refusedAfter.merge(s.node(), 1, Integer::sum);
            }
          }
        }
        assertThat(admittedBeforeThePut).as("admissions on both nodes right up to the PUT").containsKeys(a, b);
        assertThat(refusedAfter).as("refusals on both nodes after the PUT").containsKeys(a, b);
        assertThat(after).as("decisions on both nodes after the PUT").isGreaterThanOrEqualTo(200);
        // what was recorded is what was admitted: no suppressed decision counted
        JsonNode counters = a.get("/v1/recipients/stop").body().get("counters");
        assertThat(counters).hasSize(1);
        assertThat(counters.get(0).get("used").asLong()).isEqualTo(admitted);
      } finally {
        pool.shutdownNow();
      }
      // the other node reads and lifts the same entry
      assertThat(b.get("/v1/suppressions/stop").body().get("reason").asText()).isEqualTo("replied STOP");
      assertThat(b.send("DELETE", "/v1/suppressions/stop", null, Map.of()).body().get("removed").asBoolean()).isTrue();
      Node.Reply lifted = a.decide("{\"recipient\": \"stop\", \"channel\": \"sms\", \"content\": \"after\"}");
      assertThat(lifted.body().path("suppressedReason").isMissingNode()).isTrue();
      assertThat(lifted.allowed()).isTrue();
    }
  }

  @Test
  void eitherNodePagesThroughTheListByCursor() throws Exception {
    try (Node a = Node.onRedis(REDIS.uri(), "list:rules", "list:audit", Map.of());
        Node b = Node.onRedis(REDIS.uri(), "list:rules", "list:audit", Map.of())) {
      List<String> put = new ArrayList<>();
      for (int i = 0; i < 7; i++) {
        put.add("+1666" + i);
        assertThat(a.send("PUT", "/v1/suppressions/%2B1666" + i + "?tenant=listed", "{\"reason\": \"STOP\"}",
            Map.of()).status()).isEqualTo(200);
      }
      List<String> listed = new ArrayList<>();
      String cursor = "";
      for (int pages = 0; pages < 10 && cursor != null; pages++) {
        Node.Reply page = b.get("/v1/suppressions?tenant=listed&limit=3&cursor="
            + java.net.URLEncoder.encode(cursor, java.nio.charset.StandardCharsets.UTF_8));
        assertThat(page.status()).isEqualTo(200);
        page.body().get("items").forEach(e -> listed.add(e.get("recipient").asText()));
        cursor = page.body().path("nextCursor").asText(null);
      }
      assertThat(listed).containsExactlyInAnyOrderElementsOf(put).doesNotHaveDuplicates();
    }
  }
}
