package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.redis.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two server nodes on one Redis share counters and rules. */
class TwoNodesIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  @Test
  void aRecipientsLimitHoldsAcrossBothNodes() throws Exception {
    try (Node a = Node.onRedis(REDIS.uri(), "two:rules", "two:audit", Map.of());
        Node b = Node.onRedis(REDIS.uri(), "two:rules", "two:audit", Map.of())) {
      // 4 threads, 2 per node, 60 decisions with distinct contents for one recipient: the seed policy's
      // recipient-per-minute (15) is the only rule that can refuse
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<Integer>> admitted = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          Node node = t % 2 == 0 ? a : b;
          int thread = t;
          admitted.add(pool.submit(() -> {
            int n = 0;
            for (int i = 0; i < 15; i++) {
              Node.Reply r = node.decide("{\"recipient\": \"shared\", \"content\": \"m" + thread + "-" + i + "\"}");
              assertThat(r.degraded()).isFalse();
              n += r.allowed() ? 1 : 0;
            }
            return n;
          }));
        }
        int total = 0;
        for (Future<Integer> f : admitted) {
          total += f.get(60, TimeUnit.SECONDS);
        }
        assertThat(total).isEqualTo(15);
      } finally {
        pool.shutdownNow();
      }
      // both nodes read the same counters
      assertThat(usedPerMinute(a, "shared")).isEqualTo(15);
      assertThat(usedPerMinute(b, "shared")).isEqualTo(15);
    }
  }

  @Test
  void aMessageIdRetriedOnBothNodesCountsOnceAndEitherNodeReleasesIt() throws Exception {
    try (Node a = Node.onRedis(REDIS.uri(), "mid:rules", "mid:audit", Map.of());
        Node b = Node.onRedis(REDIS.uri(), "mid:rules", "mid:audit", Map.of())) {
      // a retry storm: 4 threads, 2 per node, each sends the same 5 message ids 4 times
      ExecutorService pool = Executors.newFixedThreadPool(4);
      List<Future<List<String>>> ids = new ArrayList<>();
      try {
        for (int t = 0; t < 4; t++) {
          Node node = t % 2 == 0 ? a : b;
          ids.add(pool.submit(() -> {
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
              Node.Reply r = node.decide("{\"recipient\": \"twice\", \"content\": \"c" + i % 5
                  + "\", \"messageId\": \"m-" + i % 5 + "\"}");
              assertThat(r.allowed()).isTrue();
              assertThat(r.degraded()).isFalse();
              seen.add(i % 5 + "=" + r.body().get("decisionId").asText());
            }
            return seen;
          }));
        }
        java.util.Set<String> distinct = new java.util.HashSet<>();
        for (Future<List<String>> f : ids) {
          distinct.addAll(f.get(60, TimeUnit.SECONDS));
        }
        assertThat(distinct).as("one decision id per message id, on both nodes").hasSize(5);
      } finally {
        pool.shutdownNow();
      }
      assertThat(usedPerMinute(a, "twice")).isEqualTo(5);
      // the send of m-2 failed: node B, which may never have seen it, releases it by message id
      Node.Reply released = b.send("POST", "/v1/messages/release",
          "{\"recipient\": \"twice\", \"content\": \"c2\", \"messageId\": \"m-2\"}", Map.of());
      assertThat(released.body().get("released").asBoolean()).isTrue();
      Node.Reply again = a.send("POST", "/v1/messages/release",
          "{\"recipient\": \"twice\", \"content\": \"c2\", \"messageId\": \"m-2\"}", Map.of());
      assertThat(again.body().get("released").asBoolean()).as("released once, whichever node asks").isFalse();
      assertThat(usedPerMinute(a, "twice")).isEqualTo(4);
      assertThat(usedPerMinute(b, "twice")).isEqualTo(4);
      assertThat(a.decide("{\"recipient\": \"twice\", \"content\": \"c2\", \"messageId\": \"m-2\"}").body()
          .has("replayed")).as("a released id is decided afresh").isFalse();
    }
  }

  @Test
  void aDecisionIsReleasedByItsIdOnTheOtherNodeOnce() throws Exception {
    try (Node a = Node.onRedis(REDIS.uri(), "rel:rules", "rel:audit", Map.of());
        Node b = Node.onRedis(REDIS.uri(), "rel:rules", "rel:audit", Map.of())) {
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 15; i++) {
        Node.Reply r = a.decide("{\"recipient\": \"by-id\", \"content\": \"c" + i + "\"}");
        assertThat(r.allowed()).isTrue();
        ids.add(r.body().get("decisionId").asText());
      }
      assertThat(ids.get(0)).as("the recipient is not readable in the id").doesNotContain("by-id");
      assertThat(a.decide("{\"recipient\": \"by-id\", \"content\": \"c15\"}").allowed()).isFalse();
      // the send of the 4th failed: node B, which never saw the decision, releases it by its id
      String path = "/v1/decisions/" + ids.get(3) + "/release";
      assertThat(b.send("POST", path, null, Map.of()).body().get("released").asBoolean()).isTrue();
      // a retry (its answer timed out) on either node answers true and gives back nothing more
      assertThat(a.send("POST", path, null, Map.of()).body().get("released").asBoolean()).isTrue();
      assertThat(b.send("POST", path, null, Map.of()).body().get("released").asBoolean()).isTrue();
      assertThat(usedPerMinute(a, "by-id")).isEqualTo(14);
      assertThat(usedPerMinute(b, "by-id")).isEqualTo(14);
      JsonNode garbled = b.send("POST", "/v1/decisions/" + ids.get(5).substring(0, 20) + "/release", null, Map.of())
          .body();
      assertThat(garbled.get("released").asBoolean()).isFalse();
      assertThat(garbled.get("reason").asText()).isEqualTo("unknown");
    }
  }

  @Test
  void anEditOnOneNodeIsLiveOnTheOther() throws Exception {
    try (Node a = Node.onRedis(REDIS.uri(), "edit:rules", "edit:audit", Map.of());
        Node b = Node.onRedis(REDIS.uri(), "edit:rules", "edit:audit", Map.of())) {
      long before = b.get("/v1/rules").body().get("version").asLong();
      Node.Reply edited = a.send("PUT", "/v1/rules/recipient-per-minute",
          "{\"limit\": 3, \"window\": \"1m\", \"key\": [\"recipient\"]}", Map.of());
      assertThat(edited.status()).isEqualTo(200);
      long version = edited.body().get("version").asLong();
      assertThat(version).isEqualTo(before + 1);

      // B polls Redis every 250 ms; wait (bounded) until it has the edit
      JsonNode onB = Awaitility.await("the edit on node B").atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(20)).pollInSameThread()
          .until(() -> b.get("/v1/rules").body(), rules -> rules.get("version").asLong() == version);
      assertThat(onB.get("version").asLong()).isEqualTo(version);
      assertThat(onB.get("rules").get(0).get("limit").asLong()).isEqualTo(3);

      // and B decides with it: the fourth message to a fresh recipient is refused by the new limit
      for (int i = 0; i < 3; i++) {
        assertThat(b.decide("{\"recipient\": \"after-edit\", \"content\": \"c" + i + "\"}").allowed()).isTrue();
      }
      JsonNode fourth = b.decide("{\"recipient\": \"after-edit\", \"content\": \"c3\"}").body();
      assertThat(fourth.get("allowed").asBoolean()).isFalse();
      assertThat(fourth.get("blockedBy").get(0).asText()).isEqualTo("recipient-per-minute");
      assertThat(fourth.get("policyVersion").asLong()).isEqualTo(version);

      // an edit on B goes the other way; If-Match with the version both now share
      // 409 rules_changed only in the moment between B picking up the edit and moving its base
      Node.Reply back = Awaitility.await("the edit on node B without a conflict").atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(50)).pollInSameThread()
          .until(() -> b.send("PUT", "/v1/rules/recipient-per-minute",
              "{\"limit\": 4, \"window\": \"1m\", \"key\": [\"recipient\"]}", Map.of("If-Match", "\"" + version + "\"")),
              reply -> reply.status() != 409);
      assertThat(back.status()).isEqualTo(200);
      long next = back.body().get("version").asLong();
      Awaitility.await("the edit on node A").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
          .pollInSameThread().until(() -> a.get("/v1/rules").body().get("version").asLong() == next);
      assertThat(a.get("/v1/rules").body().get("rules").get(0).get("limit").asLong()).isEqualTo(4);
    }
  }

  private static long usedPerMinute(Node node, String recipient) {
    for (JsonNode c : node.get("/v1/recipients/" + recipient).body().get("counters")) {
      if (c.get("rule").asText().equals("recipient-per-minute")) {
        return c.get("used").asLong();
      }
    }
    throw new AssertionError("no recipient-per-minute counter for " + recipient);
  }
}
