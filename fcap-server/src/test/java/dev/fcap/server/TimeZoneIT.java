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
import dev.fcap.server.grpc.v1.RecipientRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A message's time zone over HTTP (single and batch) and gRPC: an IANA id is taken, an unknown one is
 * refused naming the field and records nothing; a refused decision says when the message may go
 * ({@code sendAt}), and only a refused one.
 */
class TimeZoneIT {
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - {id: one-per-minute, limit: 1, window: 1m, key: [recipient]}
      """;
  static TestServer s;
  static FcapServiceBlockingStub grpc;

  @BeforeAll
  static void start() {
    s = TestServer.start(RULES, Map.of());
    grpc = GrpcClients.builder(s.base()).build(FcapServiceBlockingStub.class);
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  @Test
  void aKnownZoneIsTakenAndARefusalSaysWhenToSend() {
    TestServer.Reply first = s.decide("{\"recipient\": \"tz1\", \"timeZone\": \"Asia/Kathmandu\"}");
    assertThat(first.status()).isEqualTo(200);
    assertThat(first.body().get("allowed").asBoolean()).isTrue();
    assertThat(first.body().has("sendAt")).isFalse();
    assertThat(first.body().get("rules").get(0).has("sendAt")).isFalse();
    JsonNode second = s.decide("{\"recipient\": \"tz1\", \"timeZone\": \"America/New_York\"}").body();
    assertThat(second.get("allowed").asBoolean()).isFalse();
    long time = second.get("time").asLong();
    long retry = second.get("retryAfterMs").asLong();
    assertThat(retry).isPositive();
    assertThat(second.get("sendAt").asLong()).isEqualTo(time + retry);
    assertThat(second.get("rules").get(0).get("sendAt").asLong()).isEqualTo(time + retry);
  }

  @Test
  void anUnknownZoneIsRefusedNamingTheFieldAndRecordsNothing() {
    for (String zone : new String[] {"Mars/Olympus", "", "America/New York", "x".repeat(5000)}) {
      TestServer.Reply r = s.decide("{\"recipient\": \"tz2\", \"timeZone\": \"" + zone + "\"}");
      assertThat(r.status()).as(zone).isEqualTo(400);
      assertThat(r.errorCode()).as(zone).isEqualTo("invalid_time_zone");
      assertThat(r.errorField()).as(zone).isEqualTo("timeZone");
      assertThat(r.body().get("error").get("message").asText()).as(zone).contains("unknown time zone");
    }
    TestServer.Reply wrongType = s.decide("{\"recipient\": \"tz2\", \"timeZone\": 5}");
    assertThat(wrongType.errorCode()).isEqualTo("invalid_type");
    assertThat(wrongType.errorField()).isEqualTo("timeZone");
    assertThat(s.get("/v1/recipients/tz2").body().get("counters")).isEmpty();
  }

  @Test
  void aBatchRefusesTheItemWithAnUnknownZoneOnly() {
    TestServer.Reply r = s.post("/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"tz3\", \"timeZone\": "
        + "\"Europe/London\"}, {\"recipient\": \"tz4\", \"timeZone\": \"Europe/Lundun\"}]}");
    assertThat(r.status()).isEqualTo(200);
    JsonNode results = r.body().get("results");
    assertThat(results.get(0).get("allowed").asBoolean()).isTrue();
    assertThat(results.get(1).get("error").get("code").asText()).isEqualTo("invalid_time_zone");
    assertThat(results.get(1).get("error").get("field").asText()).isEqualTo("timeZone");
    assertThat(s.get("/v1/recipients/tz4").body().get("counters")).isEmpty();
  }

  @Test
  void overGrpc() {
    DecideRequest req = DecideRequest.newBuilder().setMessage(Message.newBuilder().setRecipient("tz5")
        .setTimeZone("Australia/Lord_Howe")).build();
    Decision first = grpc.decide(req);
    assertThat(first.getAllowed()).isTrue();
    assertThat(first.hasSendAt()).isFalse();
    Decision second = grpc.decide(req);
    assertThat(second.getAllowed()).isFalse();
    assertThat(second.getSendAt()).isEqualTo(second.getTime() + second.getRetryAfterMs());
    assertThat(second.getRules(0).getSendAt()).isEqualTo(second.getSendAt());
    assertThatThrownBy(() -> grpc.decide(DecideRequest.newBuilder().setMessage(Message.newBuilder()
        .setRecipient("tz6").setTimeZone("Pacific/Atlantis")).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).contains("timeZone");
        });
    BatchReply batch = grpc.decideBatch(BatchRequest.newBuilder()
        .addRequests(Message.newBuilder().setRecipient("tz7").setTimeZone("Asia/Kolkata"))
        .addRequests(Message.newBuilder().setRecipient("tz6").setTimeZone("Pacific/Atlantis")).build());
    assertThat(batch.getResults(0).getDecision().getAllowed()).isTrue();
    assertThat(batch.getResults(1).getError().getCode()).isEqualTo("invalid_time_zone");
    assertThat(batch.getResults(1).getError().getField()).isEqualTo("timeZone");
    assertThat(grpc.inspect(RecipientRequest.newBuilder().setRecipient("tz6").build()).getCountersCount()).isZero();
  }

  @Test
  void thePolicyZoneAndASendWindowRoundTripThroughRulesAdmin() {
    String policy = "{\"timeZone\": \"Europe/London\", \"rules\": [{\"id\": \"one-per-minute\", \"limit\": 1, "
        + "\"window\": \"1m\", \"key\": [\"recipient\"]}, {\"id\": \"daily\", \"limit\": 3, \"window\": \"1d\", "
        + "\"key\": [\"recipient\"], \"algorithm\": \"fixed-window\", \"zone\": \"recipient\", \"mode\": \"shadow\"}, "
        + "{\"id\": \"quiet-hours\", \"mode\": \"shadow\", \"match\": {\"category\": [\"never-sent\"]}, "
        + "\"sendWindow\": {\"allow\": [{\"days\": [\"mon\", \"fri\"], \"from\": \"08:00\", \"to\": \"21:00\"}], "
        + "\"closed\": [\"2026-12-25\"]}}]}";
    TestServer.Reply put = s.put("/v1/rules", policy, Map.of());
    assertThat(put.status()).as(put.body().toString()).isEqualTo(200);
    JsonNode read = s.get("/v1/rules").body();
    assertThat(read.get("timeZone").asText()).isEqualTo("Europe/London");
    assertThat(read.get("rules").get(1).get("zone").asText()).isEqualTo("recipient");
    JsonNode window = s.get("/v1/rules/quiet-hours").body().get("sendWindow");
    assertThat(window.get("zone").asText()).isEqualTo("recipient");
    assertThat(window.get("allow").get(0).get("days").toString()).isEqualTo("[\"mon\",\"fri\"]");
    assertThat(window.get("closed").get(0).asText()).isEqualTo("2026-12-25");
    // a rule edit keeps the policy's zone
    assertThat(s.put("/v1/rules/one-per-minute", "{\"limit\": 1, \"window\": \"1m\", \"key\": [\"recipient\"]}",
        Map.of()).status()).isEqualTo(200);
    assertThat(s.get("/v1/rules").body().get("timeZone").asText()).isEqualTo("Europe/London");
    TestServer.Reply bad = s.put("/v1/rules", "{\"timeZone\": \"Europe/Lundun\", \"rules\": []}", Map.of());
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.body().toString()).contains("timeZone");
    TestServer.Reply badWindow = s.post("/v1/rules", "{\"id\": \"w\", \"sendWindow\": {\"allow\": [{\"from\": "
        + "\"09:00\", \"to\": \"09:00\"}]}}");
    assertThat(badWindow.status()).isEqualTo(400);
    assertThat(badWindow.body().toString()).contains("sendWindow.allow[0].to");
  }
}
