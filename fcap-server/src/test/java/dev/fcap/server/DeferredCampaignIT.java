package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A campaign deferred at once: 10,000 messages to 500 recipients (20 each, over 4 contents), sent
 * as 4 batches of 2,500 at the same time to a server with the seed policy, every message asking to
 * be deferred. Each is admitted or booked; then every message is "sent" at its instant (the decision's
 * time if admitted, its {@code sendAt} if booked) and the sends are checked against every rule of the
 * seed policy, window by window: no recipient ever gets more than a rule allows in any window, so no
 * two slots were given out that together break one, however the batches interleaved.
 */
class DeferredCampaignIT {
  private static final int RECIPIENTS = 500;
  private static final int PER_RECIPIENT = 20;
  private static final int BATCHES = 4;
  /** The seed policy: {limit, window ms, keyed by content too (1) or not (0)}. */
  private static final long[][] SEED_RULES = {{15, 60_000, 0}, {50, 86_400_000, 0}, {2, 59_000, 1}, {5, 3_540_000, 1}};

  @Test
  void noRecipientEverGetsMoreThanARuleAllowsOnceEveryBookedMessageIsSent() throws Exception {
    try (TestServer server = TestServer.start(null, Map.of("store.fsync", "off"))) { // the seed policy
      List<List<String>> batches = new ArrayList<>();
      List<String[]> messages = new ArrayList<>(); // {recipient, content}, in send order
      for (int b = 0; b < BATCHES; b++) {
        batches.add(new ArrayList<>());
      }
      for (int i = 0; i < RECIPIENTS * PER_RECIPIENT; i++) {
        String recipient = "+1555" + (1_000_000 + i % RECIPIENTS);
        String content = "offer " + (i / RECIPIENTS) % 4;
        messages.add(new String[] {recipient, content});
        // the recipients' messages spread over every batch, so the batches race for the same slots
        batches.get(i % BATCHES).add("{\"recipient\": \"" + recipient + "\", \"content\": \"" + content
            + "\", \"defer\": true}");
      }
      ExecutorService pool = Executors.newFixedThreadPool(BATCHES);
      List<CompletableFuture<JsonNode>> answers = new ArrayList<>();
      for (List<String> batch : batches) {
        answers.add(CompletableFuture.supplyAsync(() -> post(server, "{\"requests\": [" + String.join(",", batch) + "]}"),
            pool));
      }
      CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
      pool.shutdown();

      Map<String, List<Long>> sends = new HashMap<>(); // per recipient, and per recipient and content
      int admitted = 0;
      int booked = 0;
      for (int i = 0; i < messages.size(); i++) {
        JsonNode d = answers.get(i % BATCHES).join().get("results").get(i / BATCHES);
        assertThat(d.get("allowed").asBoolean() || d.get("deferred").asBoolean())
            .as("message %d is admitted or booked: %s", i, d).isTrue();
        long at = d.get("allowed").asBoolean() ? d.get("time").asLong() : d.get("sendAt").asLong();
        admitted += d.get("allowed").asBoolean() ? 1 : 0;
        booked += d.get("deferred").asBoolean() ? 1 : 0;
        sends.computeIfAbsent(messages.get(i)[0], k -> new ArrayList<>()).add(at);
        sends.computeIfAbsent(messages.get(i)[0] + "\u0000" + messages.get(i)[1], k -> new ArrayList<>()).add(at);
      }
      assertThat(admitted + booked).isEqualTo(RECIPIENTS * PER_RECIPIENT);
      // 15 a minute: 5 of each recipient's 20 wait at least a minute; 2 identical a 59 s: more wait
      assertThat(booked).isGreaterThanOrEqualTo(5 * RECIPIENTS);
      for (Map.Entry<String, List<Long>> e : sends.entrySet()) {
        boolean byContent = e.getKey().contains("\u0000");
        for (long[] rule : SEED_RULES) {
          if ((rule[2] == 1) == byContent) {
            assertThat(fullestWindow(e.getValue(), rule[1])).as("%s, %d per %d ms", e.getKey(), rule[0], rule[1])
                .isLessThanOrEqualTo(rule[0]);
          }
        }
      }
    }
  }

  /** The most sends any window (s - W, s] holds: some window ending at a send holds the most. */
  private static long fullestWindow(List<Long> sends, long window) {
    List<Long> sorted = new ArrayList<>(sends);
    Collections.sort(sorted);
    long most = 0;
    int from = 0;
    for (int to = 0; to < sorted.size(); to++) {
      while (sorted.get(from) <= sorted.get(to) - window) {
        from++;
      }
      most = Math.max(most, to - from + 1);
    }
    return most;
  }

  private static JsonNode post(TestServer server, String body) {
    TestServer.Reply r = server.post("/v1/decisions/batch", body);
    assertThat(r.status()).as("%s", r.raw().body()).isEqualTo(200);
    return r.body();
  }
}
