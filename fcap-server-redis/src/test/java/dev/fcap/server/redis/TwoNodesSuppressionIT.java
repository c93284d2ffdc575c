package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.redis.testing.RedisExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two server nodes on one Redis: once a suppression PUT has answered on one node, no decision that
 * starts after it admits the recipient on either node (the entry is read in each decision's own
 * script call), while both nodes decide for that recipient without pause around the PUT; and either
 * node pages through the list the other wrote.
 */
class TwoNodesSuppressionIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  /** A decision as one deciding thread saw it: when it started (nanoTime), whether it was admitted. */
  private record Seen(long startedNanos, boolean allowed, String blockedBy) {}

  @Test
  void aSuppressedRecipientReceivesNothingOnEitherNodeTheInstantAfterThePutAnswered() throws Exception {
    try (Node a = Node.onRedis(REDIS.uri(), "sup:rules", "sup:audit", Map.of());
        Node b = Node.onRedis(REDIS.uri(), "sup:rules", "sup:audit", Map.of())) {
      AtomicLong answered = new AtomicLong(Long.MAX_VALUE); // when the PUT answered, once it has
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<List<Seen>>> seen = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
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
              mine.add(new Seen(started, r.allowed(), r.body().path("blockedBy").path(0).asText(null)));
              afterPut += started > answered.get() ? 1 : 0;
            }
            return mine;
          }));
        }
        Node.Reply put = a.send("PUT", "/v1/suppressions/stop", "{\"reason\": \"replied STOP\"}", Map.of());
        answered.set(System.nanoTime());
        assertThat(put.status()).isEqualTo(200);
        int after = 0;
        for (Future<List<Seen>> f : seen) {
          for (Seen s : f.get(120, TimeUnit.SECONDS)) {
            if (s.startedNanos() > answered.get()) {
              after++;
              assertThat(s.allowed()).as("a decision that started after the PUT answered").isFalse();
              assertThat(s.blockedBy()).isEqualTo("suppressed");
            }
          }
        }
        assertThat(after).as("decisions on both nodes after the PUT").isGreaterThanOrEqualTo(200);
      } finally {
        pool.shutdownNow();
      }
      // the other node reads and lifts the same entry
      assertThat(b.get("/v1/suppressions/stop").body().get("reason").asText()).isEqualTo("replied STOP");
      assertThat(b.send("DELETE", "/v1/suppressions/stop", null, Map.of()).body().get("removed").asBoolean()).isTrue();
      assertThat(a.decide("{\"recipient\": \"stop\", \"channel\": \"sms\", \"content\": \"after\"}").body()
          .path("suppressedReason").isMissingNode()).isTrue();
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
