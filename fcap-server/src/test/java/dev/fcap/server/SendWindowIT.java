package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.BatchReply;
import dev.fcap.server.grpc.v1.BatchRequest;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.Decision;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Message;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A send window on a running server (its own wall clock): a message outside the window is refused
 * with the window in {@code blockedBy} and a {@code sendAt} at the window's next opening in the
 * message's own zone, over HTTP (single and batch) and gRPC alike, and nothing is recorded. The
 * window is placed from the server's "now" so that it is shut whenever the test runs; the expected
 * opening is computed here with java.time.
 */
class SendWindowIT {
  /** A one-hour window starting six hours after the current hour in {@code zone}, every day. */
  private static String rules(ZoneId zone, LocalTime from) {
    return """
        policies:
          - tenant: default
            rules:
              - id: later-today
                sendWindow:
                  zone: %s
                  allow: [{from: "%s", to: "%s"}]
              - {id: two-per-day, limit: 2, window: 24h, key: [recipient]}
        """.formatted(zone.getId(), from, from.plusHours(1));
  }

  /** The first instant at or after {@code now} whose local time in {@code zone} is {@code from}. */
  private static long nextOpening(long now, ZoneId zone, LocalTime from) {
    ZonedDateTime local = Instant.ofEpochMilli(now).atZone(zone);
    ZonedDateTime opening = local.toLocalDate().atTime(from).atZone(zone);
    while (opening.toInstant().toEpochMilli() < now) {
      opening = opening.toLocalDate().plusDays(1).atTime(from).atZone(zone);
    }
    return opening.toInstant().toEpochMilli();
  }

  @Test
  void outsideTheWindowEveryTransportRefusesUntilTheNextOpeningInTheMessagesZone() {
    ZoneId zone = ZoneId.of("Asia/Kathmandu"); // +05:45: no whole-hour arithmetic can fake this
    LocalTime from = LocalTime.of((ZonedDateTime.now(zone).getHour() + 6) % 24, 0);
    try (TestServer s = TestServer.start(rules(zone, from), Map.of())) {
      FcapServiceBlockingStub grpc = GrpcClients.builder(s.base()).build(FcapServiceBlockingStub.class);
      JsonNode single = s.decide("{\"recipient\": \"w1\", \"timeZone\": \"Asia/Kathmandu\"}").body();
      assertThat(single.get("allowed").asBoolean()).isFalse();
      assertThat(single.get("blockedBy").get(0).asText()).isEqualTo("later-today");
      long time = single.get("time").asLong();
      assertThat(single.get("sendAt").asLong()).isEqualTo(nextOpening(time, zone, from));
      assertThat(single.get("retryAfterMs").asLong()).isEqualTo(single.get("sendAt").asLong() - time);

      JsonNode batch = s.post("/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"w2\"}, {\"recipient\": \"w3\"}]}")
          .body().get("results");
      for (JsonNode item : batch) {
        JsonNode d = item;
        assertThat(d.get("allowed").asBoolean()).isFalse();
        assertThat(d.get("sendAt").asLong()).isEqualTo(nextOpening(d.get("time").asLong(), zone, from));
      }

      Decision overGrpc = grpc.decide(DecideRequest.newBuilder().setMessage(Message.newBuilder().setRecipient("w4"))
          .build());
      assertThat(overGrpc.getAllowed()).isFalse();
      assertThat(overGrpc.getSendAt()).isEqualTo(nextOpening(overGrpc.getTime(), zone, from));
      BatchReply grpcBatch = grpc.decideBatch(BatchRequest.newBuilder()
          .addRequests(Message.newBuilder().setRecipient("w5")).build());
      assertThat(grpcBatch.getResults(0).getDecision().getSendAt())
          .isEqualTo(nextOpening(grpcBatch.getResults(0).getDecision().getTime(), zone, from));

      // nothing was recorded: the recipient's counter of two a day is untouched
      JsonNode counters = s.get("/v1/recipients/w1").body().get("counters");
      assertThat(counters).isEmpty();
    }
  }

  @Test
  void aRecipientZoneWindowReadsEachMessagesZone() {
    // a window in the recipient's zone, open now in one zone and shut in another half a day away
    ZoneId open = ZoneId.of("Asia/Kolkata");
    ZoneId shut = ZoneId.of("America/New_York");
    LocalTime from = LocalTime.of(ZonedDateTime.now(open).getHour(), 0);
    String rules = """
        policies:
          - tenant: default
            rules:
              - id: this-hour-in-kolkata
                sendWindow:
                  allow: [{from: "%s", to: "%s"}]
        """.formatted(from, from.plusHours(1));
    try (TestServer s = TestServer.start(rules, Map.of())) {
      JsonNode inKolkata = s.decide("{\"recipient\": \"r1\", \"timeZone\": \"Asia/Kolkata\"}").body();
      JsonNode inNewYork = s.decide("{\"recipient\": \"r2\", \"timeZone\": \"America/New_York\"}").body();
      // unless the hour turned between the two calls (then the first may be shut too)
      if (inKolkata.get("allowed").asBoolean()) {
        assertThat(inNewYork.get("allowed").asBoolean()).as("10:30 apart from Kolkata").isFalse();
        assertThat(inNewYork.get("sendAt").asLong())
            .isEqualTo(nextOpening(inNewYork.get("time").asLong(), shut, from));
      }
    }
  }
}
