package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Inspection;
import dev.fcap.server.grpc.v1.RecipientRequest;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.MemoryStore;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Inspect shows a recipient's send windows, open or shut and when each next opens, in the zone the
 * caller names, else the policy's: the same instant is inside the weekday window in New York and
 * outside it in Tokyo, and a weekend's next opening falls after the change to daylight saving.
 */
class InspectWindowsIT {
  private static final String RULES = """
      policies:
        - tenant: default
          timeZone: Asia/Tokyo
          rules:
            - {id: one-per-minute, limit: 1, window: 1m, key: [recipient]}
            - id: business-hours
              sendWindow:
                allow: [{days: [mon, tue, wed, thu, fri], from: "08:00", to: "21:00"}]
              match: {category: [marketing]}
            - id: london-office
              mode: shadow
              sendWindow:
                zone: Europe/London
                allow: [{from: "09:00", to: "17:00"}]
      """;
  /** Monday 2026-03-09 13:00 UTC: 09:00 in New York (daylight time since Sunday), 22:00 in Tokyo. */
  private static final long MONDAY = Instant.parse("2026-03-09T13:00:00Z").toEpochMilli();
  /** Saturday 2026-03-07 15:00 UTC: 10:00 in New York, still on standard time. */
  private static final long SATURDAY = Instant.parse("2026-03-07T15:00:00Z").toEpochMilli();
  static final ManualClock clock = new ManualClock(MONDAY);
  static TestServer s;
  static FcapServiceBlockingStub grpc;

  @BeforeAll
  static void start() {
    s = TestServer.start(RULES, Map.of(), MemoryStore.builder().clock(clock).build());
    grpc = GrpcClients.builder(s.base()).build(FcapServiceBlockingStub.class);
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  @BeforeEach
  void monday() {
    clock.set(MONDAY);
  }

  @Test
  void withoutAZoneThePolicysZoneIsRead() {
    JsonNode i = s.get("/v1/recipients/w1").body();
    assertThat(i.get("time").asLong()).isEqualTo(MONDAY);
    assertThat(i.get("timeZone").asText()).isEqualTo("Asia/Tokyo");
    JsonNode windows = i.get("windows");
    assertThat(windows).hasSize(2);
    JsonNode business = windows.get(0);
    assertThat(business.get("rule").asText()).isEqualTo("business-hours");
    assertThat(business.get("enforced").asBoolean()).isTrue();
    assertThat(business.get("zone").asText()).isEqualTo("Asia/Tokyo");
    assertThat(business.get("open").asBoolean()).isFalse();
    // Tuesday 08:00 in Tokyo
    assertThat(business.get("opensAt").asLong()).isEqualTo(Instant.parse("2026-03-09T23:00:00Z").toEpochMilli());
    assertThat(business.get("match").toString()).isEqualTo("{\"category\":[\"marketing\"]}");
    assertThat(business.get("exempt").toString()).isEqualTo("{}");
    JsonNode london = windows.get(1);
    assertThat(london.get("rule").asText()).isEqualTo("london-office");
    assertThat(london.get("enforced").asBoolean()).isFalse();
    assertThat(london.get("zone").asText()).isEqualTo("Europe/London");
    assertThat(london.get("open").asBoolean()).isTrue();
    assertThat(london.get("opensAt").asLong()).isEqualTo(MONDAY);
    assertThat(london.get("match").toString()).isEqualTo("{}");
  }

  @Test
  void theSameInstantIsInsideTheWindowInNewYork() {
    JsonNode i = s.get("/v1/recipients/w2?timeZone=America/New_York").body();
    assertThat(i.get("timeZone").asText()).isEqualTo("America/New_York");
    JsonNode business = i.get("windows").get(0);
    assertThat(business.get("zone").asText()).isEqualTo("America/New_York");
    assertThat(business.get("open").asBoolean()).isTrue();
    assertThat(business.get("opensAt").asLong()).isEqualTo(MONDAY);
    // a fixed-zone window reads its own zone whatever the recipient's
    assertThat(i.get("windows").get(1).get("zone").asText()).isEqualTo("Europe/London");
  }

  @Test
  void aWeekendsNextOpeningFallsAfterTheChangeToDaylightSaving() {
    clock.set(SATURDAY);
    JsonNode business = s.get("/v1/recipients/w3?timeZone=America/New_York").body().get("windows").get(0);
    assertThat(business.get("open").asBoolean()).isFalse();
    // Monday 08:00 EDT (UTC-4), not 08:00 EST
    assertThat(business.get("opensAt").asLong()).isEqualTo(Instant.parse("2026-03-09T12:00:00Z").toEpochMilli());
  }

  @Test
  void aRefusedDecisionsSendAtIsTheOpeningInspectShows() {
    long opensAt = s.get("/v1/recipients/w4").body().get("windows").get(0).get("opensAt").asLong();
    JsonNode d = s.post("/v1/decisions", "{\"recipient\": \"w4\", \"category\": \"marketing\"}").body();
    assertThat(d.get("allowed").asBoolean()).isFalse();
    assertThat(d.get("blockedBy").toString()).isEqualTo("[\"business-hours\"]");
    assertThat(d.get("sendAt").asLong()).isEqualTo(opensAt);
  }

  @Test
  void anUnknownZoneIsRefusedNamingTheField() {
    for (String zone : new String[] {"Mars/Olympus", "", "x".repeat(200)}) {
      TestServer.Reply r = s.get("/v1/recipients/w5?timeZone=" + zone);
      assertThat(r.status()).as(zone).isEqualTo(400);
      assertThat(r.errorCode()).as(zone).isEqualTo("invalid_time_zone");
      assertThat(r.errorField()).as(zone).isEqualTo("timeZone");
    }
  }

  @Test
  void overGrpc() {
    Inspection i = grpc.inspect(RecipientRequest.newBuilder().setRecipient("w6").setTimeZone("America/New_York")
        .build());
    assertThat(i.getTimeZone()).isEqualTo("America/New_York");
    assertThat(i.getWindowsCount()).isEqualTo(2);
    assertThat(i.getWindows(0).getRuleId()).isEqualTo("business-hours");
    assertThat(i.getWindows(0).getOpen()).isTrue();
    assertThat(i.getWindows(0).getOpensAt()).isEqualTo(MONDAY);
    assertThat(i.getWindows(0).getMatchMap().get("category").getValuesList()).containsExactly("marketing");
    Inspection tokyo = grpc.inspect(RecipientRequest.newBuilder().setRecipient("w6").build());
    assertThat(tokyo.getTimeZone()).isEqualTo("Asia/Tokyo");
    assertThat(tokyo.getWindows(0).getOpen()).isFalse();
    assertThat(tokyo.getWindows(0).getOpensAt()).isEqualTo(Instant.parse("2026-03-09T23:00:00Z").toEpochMilli());
    assertThatThrownBy(() -> grpc.inspect(RecipientRequest.newBuilder().setRecipient("w6")
        .setTimeZone("Pacific/Atlantis").build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).contains("timeZone");
        });
  }
}
