package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The failure policy end to end over HTTP: an unreachable or hanging store is an error (503, 429) until
 * it has failed for {@code failure.window}; then the outage: per-category actions, degraded decisions;
 * automatic recovery with the outage's admissions written back. (Traces on a manual clock:
 * {@code FailoverStoreTest}; real Redis: {@code RedisOutageIT}.)
 */
class FailurePolicyIT {
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - {id: per-minute, limit: 2, window: 1m, key: [recipient]}
      """;
  private static final Map<String, String> SETTINGS = Map.of("store.timeout", "200ms", "failure.probeInterval",
      "100ms", "failure.window", "300ms", "failure.categories", "{marketing: deny}");

  /** Polls (bounded, 20 s) until {@code condition} holds. */
  static void await(String what, BooleanSupplier condition) {
    Awaitility.await(what).atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).pollInSameThread()
        .until(condition::getAsBoolean);
  }

  private static boolean degraded(TestServer.Reply r) {
    return r.status() == 200 && r.body().get("degraded").asBoolean();
  }

  @Test
  void outageFallsBackPerCategoryAndRecoversWithTheLocalAdmissionsWrittenBack() throws Exception {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(RULES, SETTINGS, store)) {
      assertThat(s.decide("{\"recipient\": \"r\"}").body().get("degraded").asBoolean()).isFalse();
      store.mode = FlakyStore.Mode.DOWN;

      // before the window is over: an error to retry, not a local decision
      TestServer.Reply early = s.decide("{\"recipient\": \"early\"}");
      assertThat(early.status()).isEqualTo(503);
      assertThat(early.errorCode()).isEqualTo("store_unavailable");
      assertThat(early.raw().headers().firstValue("retry-after")).hasValue("1");
      await("the outage", () -> degraded(s.decide("{\"recipient\": \"probe\", \"dryRun\": true}")));

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
      assertThat(ready.body().get("storeDown").asBoolean()).isTrue();
      assertThat(s.get("/metrics").raw().body()).contains("fcap_store_up 0.0")
          .contains("fcap_degraded_decisions_total{action=\"deny\",tenant=\"default\"}")
          .contains("fcap_degraded_decisions_total{action=\"local\",tenant=\"default\"}");

      store.mode = FlakyStore.Mode.UP;
      await("recovery", () -> !degraded(s.decide("{\"recipient\": \"after\", \"dryRun\": true}")));
      // back on the store: r had one admission there before the outage and two in the outage store
      JsonNode back = s.decide("{\"recipient\": \"r\"}").body();
      assertThat(back.get("degraded").asBoolean()).isFalse();
      assertThat(back.get("allowed").asBoolean()).isFalse();
      assertThat(back.get("rules").get(0).get("used").asLong()).isEqualTo(3);
      assertThat(s.get("/ready").status()).isEqualTo(200);
      assertThat(s.server.failover().writtenBack()).isEqualTo(2);
    }
  }

  @Test
  void aHangingStoreIsBackpressureUntilItHasBeenSilentForTheWindow() {
    // the same deadline, but a window of an hour: the store is silent, never for long enough to be an outage
    Map<String, String> settings = new HashMap<>(SETTINGS);
    settings.put("failure.window", "1h");
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(RULES, settings, store)) {
      store.mode = FlakyStore.Mode.HANG;
      TestServer.Reply busy = s.decide("{\"recipient\": \"h\"}");
      assertThat(busy.status()).as("cut off by store.timeout: the store never answers").isEqualTo(429);
      assertThat(busy.errorCode()).isEqualTo("store_busy");
      assertThat(busy.raw().headers().firstValue("retry-after")).hasValue("1");
      TestServer.Reply batch = s.post("/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"h\"}, "
          + "{\"recipient\": \"h\", \"category\": \"marketing\"}]}");
      assertThat(batch.status()).as("every item busy: the batch is busy").isEqualTo(429);
      assertThat(batch.errorCode()).isEqualTo("store_busy");
      assertThat(s.server.failover().down()).isFalse();
    }
  }

  @Test
  void aHangingStoreIsAnOutageOnceSilentForTheWindow() throws Exception {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(RULES, SETTINGS, store)) {
      store.mode = FlakyStore.Mode.HANG;
      // silence over the window (the probe hangs too): an outage
      await("the outage", () -> degraded(s.decide("{\"recipient\": \"h\"}")));
      JsonNode items = s.post("/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"h\"}, "
          + "{\"recipient\": \"h\", \"category\": \"marketing\"}]}").body().get("results");
      assertThat(items.get(0).get("degraded").asBoolean()).isTrue();
      assertThat(items.get(0).get("degradedReason").asText()).isEqualTo("store_down");
      assertThat(items.get(1).get("allowed").asBoolean()).isFalse();
      assertThat(items.get(1).get("degradedReason").asText()).isEqualTo("store_down");
      assertThat(s.get("/v1/recipients/h").body().get("degraded").asBoolean()).isTrue();
      assertThat(s.delete("/v1/recipients/h").status()).isEqualTo(503);
    }
  }

  @Test
  void aFullStoreGetsTheFailurePolicyForThatRequestOnly() {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(RULES, SETTINGS, store)) {
      store.mode = FlakyStore.Mode.FULL;
      JsonNode local = s.decide("{\"recipient\": \"f\"}").body();
      assertThat(local.get("degraded").asBoolean()).isTrue();
      assertThat(local.get("degradedReason").asText()).isEqualTo("store_full");
      assertThat(local.get("allowed").asBoolean()).as("failure.full local: decided on the node's own store").isTrue();
      JsonNode otp = s.decide("{\"recipient\": \"f\", \"category\": \"transactional\"}").body();
      assertThat(otp.get("allowed").asBoolean()).isTrue();
      assertThat(s.server.failover().down()).isFalse();
      store.mode = FlakyStore.Mode.UP;
      assertThat(s.decide("{\"recipient\": \"f\"}").body().get("degraded").asBoolean()).isFalse();
    }
  }

  @Test
  void aFullStoreThatCannotSayWhenRoomFreesSaysNever() {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    Map<String, String> settings = new java.util.HashMap<>(SETTINGS);
    settings.put("failure.full", "deny");
    try (TestServer s = TestServer.start(RULES, settings, store)) {
      store.mode = FlakyStore.Mode.FULL;
      JsonNode d = s.decide("{\"recipient\": \"f\", \"category\": \"transactional\"}").body();
      assertThat(d.get("allowed").asBoolean()).as("deny for every category").isFalse();
      assertThat(d.get("degradedReason").asText()).isEqualTo("store_full");
      assertThat(d.get("retryAfterMs").asLong()).isEqualTo(-1);
      assertThat(d.get("sendAt").asLong()).isEqualTo(-1);
    }
  }

  @Test
  void allowAndDenyDefaults() throws Exception {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(RULES, Map.of("failure.default", "deny", "failure.probeInterval", "1m",
        "failure.window", "50ms"), store)) {
      store.mode = FlakyStore.Mode.DOWN;
      await("the outage", () -> degraded(s.decide("{\"recipient\": \"d\"}")));
      assertThat(s.decide("{\"recipient\": \"d\"}").body().get("allowed").asBoolean()).isFalse();
      assertThat(s.decide("{\"recipient\": \"d\", \"category\": \"transactional\"}").body().get("allowed")
          .asBoolean()).isTrue();
    }
  }
}
