package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.BatchReply;
import dev.fcap.server.grpc.v1.BatchRequest;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.Decision;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Message;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Priority with reserved headroom on a running server: a recipient whose day is filled by {@code low}
 * marketing still receives its {@code normal} and {@code high} notices up to their bounds, over HTTP
 * (single and batch) and gRPC; every class counts in the one counter; the outcome names the bound;
 * an unknown priority is refused with its field named and records nothing.
 */
class PriorityIT {
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - id: per-day
              limit: 10
              window: 24h
              key: [recipient]
              headroom: {high: 1, normal: 3, low: 6}
      """;

  private static String message(String recipient, String priority) {
    return "{\"recipient\": \"" + recipient + "\", \"category\": \"marketing\", \"priority\": \"" + priority + "\"}";
  }

  @Test
  void aDayFilledByLowMarketingStillTakesTheNoticesAboveIt() {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      for (int i = 0; i < 4; i++) {
        assertThat(s.decide(message("r1", "low")).body().get("allowed").asBoolean()).as("low %d", i).isTrue();
      }
      JsonNode refused = s.decide(message("r1", "low")).body();
      assertThat(refused.get("allowed").asBoolean()).isFalse();
      assertThat(refused.get("blockedBy").get(0).asText()).isEqualTo("per-day");
      JsonNode outcome = refused.get("rules").get(0);
      assertThat(outcome.get("limit").asLong()).isEqualTo(10);
      assertThat(outcome.get("bound").asLong()).isEqualTo(4);
      assertThat(outcome.get("used").asLong()).isEqualTo(4);

      // normal to 7 and high to 9 in one batch, in order: each item sees the ones before it
      StringBuilder batch = new StringBuilder("{\"requests\": [");
      for (int i = 0; i < 8; i++) {
        batch.append(i == 0 ? "" : ", ").append(message("r1", i < 4 ? "normal" : "high"));
      }
      JsonNode results = s.post("/v1/decisions/batch", batch.append("]}").toString()).body().get("results");
      boolean[] expected = {true, true, true, false, true, true, false, false};
      for (int i = 0; i < expected.length; i++) {
        assertThat(results.get(i).get("allowed").asBoolean()).as("batch item %d", i).isEqualTo(expected[i]);
      }
      assertThat(results.get(3).get("rules").get(0).get("bound").asLong()).isEqualTo(7);
      assertThat(results.get(6).get("rules").get(0).get("bound").asLong()).isEqualTo(9);

      // the last unit is critical's alone; a message without a priority is normal
      assertThat(s.decide("{\"recipient\": \"r1\"}").body().get("allowed").asBoolean()).isFalse();
      JsonNode critical = s.decide(message("r1", "critical")).body();
      assertThat(critical.get("allowed").asBoolean()).isTrue();
      assertThat(critical.get("rules").get(0).has("bound")).isFalse(); // the limit itself
      assertThat(s.decide(message("r1", "critical")).body().get("allowed").asBoolean()).isFalse();
    }
  }

  @Test
  void grpcCarriesThePriorityAndTheBoundAndRefusesAnUnknownOne() {
    try (TestServer s = TestServer.start(RULES, Map.of())) {
      FcapServiceBlockingStub grpc = GrpcClients.builder(s.base()).build(FcapServiceBlockingStub.class);
      for (int i = 0; i < 4; i++) {
        assertThat(grpc.decide(request("g1", "low")).getAllowed()).isTrue();
      }
      Decision low = grpc.decide(request("g1", "low"));
      assertThat(low.getAllowed()).isFalse();
      assertThat(low.getRules(0).getBound()).isEqualTo(4);
      BatchReply batch = grpc.decideBatch(BatchRequest.newBuilder()
          .addRequests(Message.newBuilder().setRecipient("g1").setPriority("high")).build());
      assertThat(batch.getResults(0).getDecision().getAllowed()).isTrue();
      assertThat(batch.getResults(0).getDecision().getRules(0).getBound()).isEqualTo(9);

      assertThatThrownBy(() -> grpc.decide(request("g2", "urgent")))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains("unknown priority 'urgent'");
          });
      TestServer.Reply bad = s.decide(message("g2", "URGENT"));
      assertThat(bad.status()).isEqualTo(400);
      assertThat(bad.body().get("error").get("code").asText()).isEqualTo("invalid_priority");
      assertThat(bad.body().get("error").get("field").asText()).isEqualTo("priority");
      assertThat(s.get("/v1/recipients/g2").body().get("counters")).isEmpty();
    }
  }

  private static DecideRequest request(String recipient, String priority) {
    return DecideRequest.newBuilder().setMessage(Message.newBuilder().setRecipient(recipient).setPriority(priority))
        .build();
  }
}
