package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.oracle.DeferredCampaign;
import dev.fcap.store.redis.testing.RedisExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The deferred campaign ({@link DeferredCampaign}: 10,000 messages to 500 recipients, every one
 * asking to be deferred) on two nodes sharing a 3-master Redis Cluster, its 4 batches sent at the
 * same time, two to each node: the nodes book in the same scripts, so however their batches
 * interleave, every message is admitted or booked and, sent at its instant, no recipient gets more
 * than a seed rule allows in any window.
 */
class DeferredCampaignOnRedisIT {
  @RegisterExtension
  static final RedisExtension CLUSTER = RedisExtension.cluster();

  @Test
  void twoNodesBookACampaignWithoutBreakingAWindow() throws Exception {
    DeferredCampaign campaign = new DeferredCampaign(500, 20, 4);
    try (Node a = Node.onRedis(CLUSTER.uri(), "campaign:rules", "campaign:audit", Map.of("store.timeout", "10s"));
        Node b = Node.onRedis(CLUSTER.uri(), "campaign:rules", "campaign:audit", Map.of("store.timeout", "10s"))) {
      ExecutorService pool = Executors.newFixedThreadPool(campaign.batches());
      List<CompletableFuture<JsonNode>> answers = new ArrayList<>();
      for (int i = 0; i < campaign.batches(); i++) {
        Node node = i % 2 == 0 ? a : b;
        String body = campaign.batchBody(i);
        answers.add(CompletableFuture.supplyAsync(() -> {
          Node.Reply r = node.send("POST", "/v1/decisions/batch", body, Map.of());
          assertThat(r.status()).as("%s", r.body()).isEqualTo(200);
          return r.body();
        }, pool));
      }
      CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
      pool.shutdown();
      List<DeferredCampaign.Answer> each = new ArrayList<>();
      for (int i = 0; i < campaign.size(); i++) {
        JsonNode d = answers.get(i % campaign.batches()).join().get("results").get(i / campaign.batches());
        assertThat(d.path("degraded").asBoolean()).as("decided by Redis: %s", d).isFalse();
        each.add(new DeferredCampaign.Answer(d.get("allowed").asBoolean(), d.path("deferred").asBoolean(),
            d.get("time").asLong(), d.path("sendAt").asLong()));
      }
      assertThat(campaign.assertNoWindowBroken(each)).as("booked").isGreaterThanOrEqualTo(5 * 500);
    }
  }
}
