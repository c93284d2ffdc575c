package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Many concurrent clients on one recipient through the API: exactly the limit is admitted, never more. */
class ConcurrencyIT {
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - id: per-hour
              limit: 100
              window: 1h
              key: [recipient]
      """;

  @Test
  void exactlyTheLimitIsAdmitted() throws Exception {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      AtomicInteger admitted = new AtomicInteger();
      AtomicInteger denied = new AtomicInteger();
      ExecutorService pool = Executors.newFixedThreadPool(16);
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        all.add(CompletableFuture.runAsync(() -> {
          TestServer client = s;
          for (int i = 0; i < 25; i++) {
            boolean ok = client.decide("{\"recipient\": \"hot\"}").body().get("allowed").asBoolean();
            (ok ? admitted : denied).incrementAndGet();
          }
        }, pool));
      }
      CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      pool.shutdown();
      assertThat(admitted.get()).isEqualTo(100);
      assertThat(denied.get()).isEqualTo(300);
      assertThat(s.get("/v1/recipients/hot").body().get("counters").get(0).get("used").asLong()).isEqualTo(100);
    }
  }

  @Test
  void concurrentBatchesOnOneRecipientAlsoAdmitExactlyTheLimit() throws Exception {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      String batch = "{\"requests\": [" + "{\"recipient\": \"hot\"},".repeat(49) + "{\"recipient\": \"hot\"}]}";
      ExecutorService pool = Executors.newFixedThreadPool(8);
      List<CompletableFuture<Integer>> all = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        all.add(CompletableFuture.supplyAsync(() -> {
          int ok = 0;
          for (var r : s.post("/v1/decisions/batch", batch).body().get("results")) {
            ok += r.get("allowed").asBoolean() ? 1 : 0;
          }
          return ok;
        }, pool));
      }
      int admitted = 0;
      for (CompletableFuture<Integer> f : all) {
        admitted += f.get(60, TimeUnit.SECONDS);
      }
      pool.shutdown();
      assertThat(admitted).isEqualTo(100);
    }
  }
}
