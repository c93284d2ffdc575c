package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.memory.MemoryStore;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Shutdown lets an in-flight request finish and flushes the audit. */
class GracefulShutdownIT {

  @Test
  void inFlightRequestsFinishAndTheAuditIsFlushed() throws Exception {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    TestServer s = TestServer.start("""
        policies:
          - tenant: default
            rules:
              - {id: one, limit: 1, window: 1h, key: [recipient]}
        """, Map.of("store.timeout", "1s", "audit.sampleAdmissions", "1.0"), store);
    for (int i = 0; i < 50; i++) {
      s.decide("{\"recipient\": \"r" + (i % 10) + "\"}");
    }
    store.mode = FlakyStore.Mode.HANG;
    CompletableFuture<HttpResponse<String>> inFlight = s.http.sendAsync(HttpRequest.newBuilder(
        URI.create(s.base() + "/v1/decisions")).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"recipient\": \"late\"}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(store.hanging.await(10, TimeUnit.SECONDS)).isTrue();
    s.close();
    // the in-flight request is answered (the hanging store is cut off by store.timeout: busy, nothing recorded)
    HttpResponse<String> r = inFlight.get(10, TimeUnit.SECONDS);
    assertThat(r.statusCode()).isEqualTo(429);
    JsonNode d = TestServer.JSON.readTree(r.body());
    assertThat(d.get("error").get("code").asText()).isEqualTo("store_busy");
    // 10 admissions and 40 denials, all sampled: every one is in the file
    long lines = Files.readAllLines(s.dir.resolve("audit.jsonl")).stream()
        .filter(l -> l.contains("\"type\":\"denied\"") || l.contains("\"type\":\"allowed\"")).count();
    assertThat(lines).isEqualTo(50);
  }
}
