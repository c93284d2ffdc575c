package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.memory.MemoryStore;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The failure policy end to end: outage, timeout, per-category actions, automatic recovery. */
class FailurePolicyIT {
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - {id: per-minute, limit: 2, window: 1m, key: [recipient]}
      """;
  private static final Map<String, String> SETTINGS = Map.of("store.timeout", "200ms", "failure.probeInterval",
      "100ms", "failure.categories", "{marketing: deny}");

  @Test
  void outageFallsBackPerCategoryAndRecovers() throws Exception {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(RULES, SETTINGS, store)) {
      assertThat(s.decide("{\"recipient\": \"r\"}").body().get("degraded").asBoolean()).isFalse();
      store.mode = FlakyStore.Mode.DOWN;

      // default category: local store for the outage, still enforcing the rules, marked degraded
      JsonNode first = s.decide("{\"recipient\": \"r\"}").body();
      assertThat(first.get("degraded").asBoolean()).isTrue();
      assertThat(first.get("allowed").asBoolean()).isTrue();
      assertThat(s.decide("{\"recipient\": \"r\"}").body().get("allowed").asBoolean()).isTrue();
      JsonNode third = s.decide("{\"recipient\": \"r\"}").body();
      assertThat(third.get("allowed").asBoolean()).isFalse();
      assertThat(third.get("blockedBy").get(0).asText()).isEqualTo("per-minute");

      // transactional defaults to allow; marketing is configured to deny
      JsonNode otp = s.decide("{\"recipient\": \"r\", \"category\": \"transactional\"}").body();
      assertThat(otp.get("allowed").asBoolean()).isTrue();
      assertThat(otp.get("degraded").asBoolean()).isTrue();
      JsonNode promo = s.decide("{\"recipient\": \"fresh\", \"category\": \"marketing\"}").body();
      assertThat(promo.get("allowed").asBoolean()).isFalse();
      assertThat(promo.get("degraded").asBoolean()).isTrue();

      TestServer.Reply ready = s.get("/ready");
      assertThat(ready.status()).isEqualTo(503);
      assertThat(s.get("/metrics").raw().body()).contains("fcap_store_up 0.0")
          .contains("fcap_degraded_decisions_total{action=\"deny\",tenant=\"default\"}");

      store.mode = FlakyStore.Mode.UP;
      boolean recovered = false;
      for (int i = 0; i < 100 && !recovered; i++) {
        Thread.sleep(50);
        recovered = !s.decide("{\"recipient\": \"after\", \"dryRun\": true}").body().get("degraded").asBoolean();
      }
      assertThat(recovered).isTrue();
      // back on the store: r had one admission there before the outage
      JsonNode back = s.decide("{\"recipient\": \"r\"}").body();
      assertThat(back.get("degraded").asBoolean()).isFalse();
      assertThat(back.get("rules").get(0).get("used").asLong()).isEqualTo(1);
      assertThat(s.get("/ready").status()).isEqualTo(200);
    }
  }

  @Test
  void aHangingStoreIsCutOffByTheTimeout() {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(RULES, SETTINGS, store)) {
      store.mode = FlakyStore.Mode.HANG;
      JsonNode d = s.decide("{\"recipient\": \"h\"}").body();
      assertThat(d.get("degraded").asBoolean()).isTrue();
      assertThat(d.get("allowed").asBoolean()).isTrue();
      JsonNode batch = s.post("/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"h\"}, "
          + "{\"recipient\": \"h\", \"category\": \"marketing\"}]}").body().get("results");
      assertThat(batch.get(0).get("degraded").asBoolean()).isTrue();
      assertThat(batch.get(1).get("allowed").asBoolean()).isFalse();
      assertThat(s.get("/v1/recipients/h").body().get("degraded").asBoolean()).isTrue();
      assertThat(s.delete("/v1/recipients/h").status()).isEqualTo(503);
    }
  }

  @Test
  void aFullStoreFallsBackForThatRequestOnly() {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(RULES, SETTINGS, store)) {
      store.mode = FlakyStore.Mode.FULL;
      assertThat(s.decide("{\"recipient\": \"f\"}").body().get("degraded").asBoolean()).isTrue();
      assertThat(s.server.engine().storeDown()).isFalse();
      store.mode = FlakyStore.Mode.UP;
      assertThat(s.decide("{\"recipient\": \"f\"}").body().get("degraded").asBoolean()).isFalse();
    }
  }

  @Test
  void allowAndDenyDefaults() {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(RULES, Map.of("failure.default", "deny", "failure.probeInterval", "1m"),
        store)) {
      store.mode = FlakyStore.Mode.DOWN;
      assertThat(s.decide("{\"recipient\": \"d\"}").body().get("allowed").asBoolean()).isFalse();
      assertThat(s.decide("{\"recipient\": \"d\", \"category\": \"transactional\"}").body().get("allowed")
          .asBoolean()).isTrue();
    }
  }
}
