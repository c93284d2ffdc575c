package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.oracle.DeferredCampaign;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A campaign deferred at once ({@link DeferredCampaign}): 10,000 messages to 500 recipients (20 each,
 * over 4 contents), sent as 4 batches of 2,500 at the same time to a server with the seed policy,
 * every message asking to be deferred. Each is admitted or booked, and, every message sent at its
 * instant, no recipient ever gets more than a seed rule allows in any window, so no two slots were
 * given out that together break one, however the batches interleaved.
 */
class DeferredCampaignIT {
  private static final int RECIPIENTS = 500;
  private static final int PER_RECIPIENT = 20;
  private static final int BATCHES = 4;

  @Test
  void noRecipientEverGetsMoreThanARuleAllowsOnceEveryBookedMessageIsSent() throws Exception {
    try (TestServer server = TestServer.start(null, Map.of("store.fsync", "off"))) { // the seed policy
      DeferredCampaign campaign = new DeferredCampaign(RECIPIENTS, PER_RECIPIENT, BATCHES);
      ExecutorService pool = Executors.newFixedThreadPool(BATCHES);
      List<CompletableFuture<JsonNode>> answers = new ArrayList<>();
      for (int b = 0; b < BATCHES; b++) {
        String body = campaign.batchBody(b);
        answers.add(CompletableFuture.supplyAsync(() -> post(server, body), pool));
      }
      CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
      pool.shutdown();
      List<DeferredCampaign.Answer> each = new ArrayList<>();
      for (int i = 0; i < campaign.size(); i++) {
        JsonNode d = answers.get(i % BATCHES).join().get("results").get(i / BATCHES);
        each.add(new DeferredCampaign.Answer(d.get("allowed").asBoolean(), d.path("deferred").asBoolean(),
            d.get("time").asLong(), d.path("sendAt").asLong()));
      }
      // 15 a minute: 5 of each recipient's 20 wait at least a minute; 2 identical a 59 s: more wait
      assertThat(campaign.assertNoWindowBroken(each)).isGreaterThanOrEqualTo(5 * RECIPIENTS);
    }
  }

  private static JsonNode post(TestServer server, String body) {
    TestServer.Reply r = server.post("/v1/decisions/batch", body);
    assertThat(r.status()).as("%s", r.raw().body()).isEqualTo(200);
    return r.body();
  }
}
