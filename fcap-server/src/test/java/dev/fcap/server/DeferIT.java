package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.ManualClock;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Deferred decisions over HTTP on a server whose clock the test drives: a recipient at its limit is
 * booked for the instant its oldest message leaves the window, later bookings take later slots that
 * never break a window, a batch sees the bookings before each item, a release frees the slot, inspect
 * lists what is booked, metrics and audit record it, and every deferral the server cannot honour is a
 * 400 naming its field that records nothing.
 */
class DeferIT {
  private static final long HOUR = 3_600_000;
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - {id: two-per-hour, limit: 2, window: 1h, key: [recipient]}
        - tenant: gcra
          rules:
            - {id: smooth, limit: 2, window: 1h, key: [recipient], algorithm: gcra}
        - tenant: shared
          rules:
            - {id: per-channel, limit: 1, window: 1h, key: [channel]}
        - tenant: daily
          rules:
            - {id: per-two-days, limit: 1, window: 48h, key: [recipient], algorithm: fixed-window, zone: Europe/London}
      """;

  private final ManualClock wall = new ManualClock(System.currentTimeMillis());
  private final AtomicLong monotonic = new AtomicLong(1_000_000_000L);
  private TestServer server;

  @BeforeEach
  void start() {
    server = TestServer.start(RULES, Map.of("store.fsync", "off"), b -> b.clock(wall).monotonicNanos(monotonic::get));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void aRecipientAtItsLimitIsBookedWhenItsOldestMessageLeavesTheWindowAndLaterBookingsKeepTheWindow() {
    long first = admit("r1");
    pass(1_000);
    long second = admit("r1");
    pass(1_000);

    JsonNode booked = decide("{\"recipient\": \"r1\", \"defer\": true, \"messageId\": \"m-3\"}");
    assertThat(booked.get("allowed").asBoolean()).isFalse();
    assertThat(booked.get("deferred").asBoolean()).isTrue();
    assertThat(booked.get("sendAt").asLong()).as("when the first message leaves the hour").isEqualTo(first + HOUR);
    assertThat(booked.get("retryAfterMs").asLong()).isEqualTo(booked.get("sendAt").asLong()
        - booked.get("time").asLong());
    assertThat(booked.get("blockedBy").get(0).asText()).isEqualTo("two-per-hour");

    JsonNode next = decide("{\"recipient\": \"r1\", \"defer\": true}");
    assertThat(next.get("deferred").asBoolean()).isTrue();
    assertThat(next.get("sendAt").asLong()).as("the first slot left: when the second leaves").isEqualTo(second + HOUR);

    JsonNode plain = decide("{\"recipient\": \"r1\"}");
    assertThat(plain.get("allowed").asBoolean()).isFalse();
    assertThat(plain.get("deferred").asBoolean()).isFalse();

    JsonNode retried = decide("{\"recipient\": \"r1\", \"defer\": true, \"messageId\": \"m-3\"}");
    assertThat(retried.get("replayed").asBoolean()).isTrue();
    assertThat(retried.get("deferred").asBoolean()).isTrue();
    assertThat(retried.get("sendAt").asLong()).isEqualTo(booked.get("sendAt").asLong());

    List<Long> all = List.of(first, second, booked.get("sendAt").asLong(), next.get("sendAt").asLong());
    assertThat(mostInAnyWindow(all, HOUR)).as("messages in any hour, sent at their times").isLessThanOrEqualTo(2);
    assertThat(bookedTimes(inspect("r1"))).containsExactly(first + HOUR, second + HOUR);
    JsonNode entry = inspect("r1").get("booked").get(0);
    assertThat(entry.get("rules").get(0).asText()).isEqualTo("two-per-hour");
    assertThat(entry.get("cost").asLong()).isEqualTo(1);
  }

  @Test
  void eachDeferredItemOfABatchSeesTheBookingsBeforeIt() {
    long first = admit("r2");
    pass(1_000);
    long second = admit("r2");
    pass(1_000);
    long now = wall.millis();
    String threeHours = Instant.ofEpochMilli(now + 3 * HOUR).toString();
    JsonNode results = server.post("/v1/decisions/batch", "{\"requests\": ["
        + "{\"recipient\": \"r2\", \"defer\": true, \"notAfter\": " + (now + 3 * HOUR) + "},"
        + "{\"recipient\": \"r2\", \"defer\": true, \"notAfter\": \"" + threeHours + "\"},"
        + "{\"recipient\": \"r2\", \"defer\": true, \"notAfter\": \"" + threeHours + "\"},"
        + "{\"recipient\": \"r2\", \"defer\": true}]}").body().get("results");

    List<Long> sendAt = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      assertThat(results.get(i).get("deferred").asBoolean()).as("item %d", i).isTrue();
      sendAt.add(results.get(i).get("sendAt").asLong());
    }
    // the third waits for the hour after the first booking: the two before fill the hour ending at second + HOUR
    assertThat(sendAt).containsExactly(first + HOUR, second + HOUR, first + 2 * HOUR);
    JsonNode late = results.get(3);
    assertThat(late.get("deferred").asBoolean()).as("no slot within the default hour: refused").isFalse();
    assertThat(late.get("allowed").asBoolean()).isFalse();

    List<Long> all = new ArrayList<>(List.of(first, second));
    all.addAll(sendAt);
    assertThat(mostInAnyWindow(all, HOUR)).isLessThanOrEqualTo(2);
    assertThat(bookedTimes(inspect("r2"))).as("the refused one is not booked").containsExactlyElementsOf(sendAt);
  }

  @Test
  void releasingABookedDecisionGivesItsSlotToTheNextDeferral() {
    long first = admit("r3");
    pass(1_000);
    long second = admit("r3");
    pass(1_000);
    JsonNode a = decide("{\"recipient\": \"r3\", \"defer\": true}");
    JsonNode b = decide("{\"recipient\": \"r3\", \"defer\": true}");
    assertThat(a.get("sendAt").asLong()).isEqualTo(first + HOUR);
    assertThat(b.get("sendAt").asLong()).isEqualTo(second + HOUR);

    JsonNode released = server.post("/v1/decisions/" + a.get("decisionId").asText() + "/release", null).body();
    assertThat(released.get("released").asBoolean()).isTrue();
    assertThat(bookedTimes(inspect("r3"))).containsExactly(second + HOUR);

    JsonNode c = decide("{\"recipient\": \"r3\", \"defer\": true}");
    assertThat(c.get("deferred").asBoolean()).isTrue();
    assertThat(c.get("sendAt").asLong()).as("the released slot").isEqualTo(first + HOUR);
    assertThat(bookedTimes(inspect("r3"))).containsExactly(first + HOUR, second + HOUR);
  }

  @Test
  void aDeferralTheServerCannotHonourIsA400NamingItsFieldAndRecordsNothing() {
    long now = wall.millis();
    refused("{\"recipient\": \"r4\", \"defer\": \"yes\"}", "invalid_type", "defer");
    refused("{\"recipient\": \"r4\", \"defer\": true, \"notAfter\": \"tomorrow\"}", "invalid_field", "notAfter");
    refused("{\"recipient\": \"r4\", \"defer\": true, \"notAfter\": true}", "invalid_type", "notAfter");
    refused("{\"recipient\": \"r4\", \"defer\": true, \"notAfter\": 1.5}", "invalid_type", "notAfter");
    refused("{\"recipient\": \"r4\", \"defer\": true, \"notAfter\": -1}", "invalid_field", "notAfter");
    refused("{\"recipient\": \"r4\", \"notAfter\": " + (now + HOUR) + "}", "invalid_field", "notAfter");
    refused("{\"recipient\": \"r4\", \"defer\": false, \"notAfter\": " + (now + HOUR) + "}", "invalid_field",
        "notAfter");
    refused("{\"recipient\": \"r4\", \"defer\": true, \"notAfter\": " + (now + 8 * 24 * HOUR) + "}", "invalid_field",
        "notAfter");
    assertThat(refused("{\"tenant\": \"gcra\", \"recipient\": \"r4\", \"defer\": true}", "defer_unsupported", "defer")
        .get("message").asText()).contains("smooth");

    // per item in a batch: the valid item is decided, the others answer their error
    JsonNode results = server.post("/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"r4\", \"defer\": 1},"
        + "{\"recipient\": \"r4\", \"notAfter\": \"2026-11-28T09:00:00Z\"},"
        + "{\"tenant\": \"gcra\", \"recipient\": \"r4\", \"defer\": true}, {\"recipient\": \"r5\"}]}").body()
        .get("results");
    assertThat(results.get(0).get("error").get("field").asText()).isEqualTo("defer");
    assertThat(results.get(1).get("error").get("field").asText()).isEqualTo("notAfter");
    assertThat(results.get(2).get("error").get("code").asText()).isEqualTo("defer_unsupported");
    assertThat(results.get(3).get("allowed").asBoolean()).isTrue();

    // nothing was recorded: no counter of r4 in the default tenant, the others still admit their one message
    assertThat(inspect("r4").get("counters")).isEmpty();
    assertThat(decide("{\"tenant\": \"gcra\", \"recipient\": \"r4\"}").get("allowed").asBoolean()).isTrue();
    // a rule keyed by the channel books too: the channel's one slot of the hour is taken, the next is in an hour
    assertThat(decide("{\"tenant\": \"shared\", \"recipient\": \"r4\", \"channel\": \"sms\"}").get("allowed")
        .asBoolean()).isTrue();
    JsonNode booked = decide("{\"tenant\": \"shared\", \"recipient\": \"r5\", \"channel\": \"sms\", \"defer\": true}");
    assertThat(booked.get("deferred").asBoolean()).isTrue();
    assertThat(booked.get("retryAfterMs").asLong()).isEqualTo(HOUR);
    // a fixed window of two days in a zone books into the next run of two London dates (from an even epoch day)
    assertThat(decide("{\"tenant\": \"daily\", \"recipient\": \"r4\"}").get("allowed").asBoolean()).isTrue();
    JsonNode nextRun = decide("{\"tenant\": \"daily\", \"recipient\": \"r4\", \"defer\": true, \"notAfter\": "
        + (now + 3 * 24 * HOUR) + "}");
    ZoneId london = ZoneId.of("Europe/London");
    long today = LocalDate.ofInstant(Instant.ofEpochMilli(now), london).toEpochDay();
    long runStart = LocalDate.ofEpochDay(Math.floorDiv(today, 2) * 2 + 2).atStartOfDay(london).toInstant().toEpochMilli();
    assertThat(nextRun.get("deferred").asBoolean()).isTrue();
    assertThat(nextRun.get("sendAt").asLong()).isEqualTo(runStart);
  }

  @Test
  void metricsAndAuditRecordEachDeferralAndHowFarAheadItBooks() throws IOException {
    long first = admit("r6");
    pass(1_000);
    admit("r6");
    pass(1_000);
    JsonNode booked = decide("{\"recipient\": \"r6\", \"defer\": true}");
    assertThat(booked.get("sendAt").asLong()).isEqualTo(first + HOUR);
    double ahead = (booked.get("sendAt").asLong() - booked.get("time").asLong()) / 1000.0;

    String metrics = get("/metrics");
    assertThat(metrics).contains("# HELP fcap_deferred_decisions_total", "# HELP fcap_deferred_ahead_seconds");
    assertThat(sample(metrics, "fcap_deferred_decisions_total{tenant=\"default\"}")).isEqualTo(1.0);
    assertThat(sample(metrics, "fcap_deferred_ahead_seconds_count{tenant=\"default\"}")).isEqualTo(1.0);
    assertThat(sample(metrics, "fcap_deferred_ahead_seconds_sum{tenant=\"default\"}")).isCloseTo(ahead,
        org.assertj.core.data.Offset.offset(0.001));
    assertThat(sample(metrics, "fcap_deferred_ahead_seconds_bucket{tenant=\"default\",le=\"3600.0\"}"))
        .as("booked a little under an hour ahead").isEqualTo(1.0);
    assertThat(sample(metrics, "fcap_deferred_ahead_seconds_bucket{tenant=\"default\",le=\"900.0\"}")).isEqualTo(0.0);

    String id = booked.get("decisionId").asText();
    await().atMost(Duration.ofSeconds(30)).pollInSameThread().until(() -> auditLine(id) != null);
    JsonNode line = auditLine(id);
    assertThat(line.get("type").asText()).isEqualTo("denied");
    assertThat(line.get("deferred").asBoolean()).isTrue();
    assertThat(line.get("sendAt").asLong()).isEqualTo(first + HOUR);
    assertThat(line.get("recipient").asText()).isEqualTo("r6");
  }

  // ---------------------------------------------------------------------------------------------

  /** Real time passes: both clocks move together. */
  private void pass(long ms) {
    wall.advance(ms);
    monotonic.addAndGet(ms * 1_000_000);
  }

  /** Decides an admitted message and returns its time. */
  private long admit(String recipient) {
    JsonNode d = decide("{\"recipient\": \"" + recipient + "\", \"defer\": true}");
    assertThat(d.get("allowed").asBoolean()).as("admitted now: %s", d).isTrue();
    assertThat(d.get("deferred").asBoolean()).isFalse();
    return d.get("time").asLong();
  }

  private JsonNode refused(String body, String code, String field) {
    TestServer.Reply r = server.post("/v1/decisions", body);
    assertThat(r.status()).as(body).isEqualTo(400);
    JsonNode error = r.body().get("error");
    assertThat(error.get("code").asText()).as(body).isEqualTo(code);
    assertThat(error.get("field").asText()).as(body).isEqualTo(field);
    assertThat(error.get("message").asText()).as(body).isNotBlank();
    return error;
  }

  /** The largest count of {@code times} within any window of {@code windowMs}: at most ends at a time. */
  private static int mostInAnyWindow(List<Long> times, long windowMs) {
    int most = 0;
    for (long end : times) {
      most = Math.max(most, (int) times.stream().filter(t -> t > end - windowMs && t <= end).count());
    }
    return most;
  }

  private static List<Long> bookedTimes(JsonNode inspection) {
    List<Long> times = new ArrayList<>();
    inspection.get("booked").forEach(b -> times.add(b.get("time").asLong()));
    return times;
  }

  private static double sample(String metrics, String series) {
    return metrics.lines().filter(l -> l.startsWith(series + " ")).map(l -> Double.parseDouble(l.substring(
        series.length() + 1).trim())).findFirst().orElseThrow(() -> new AssertionError("no " + series + " in\n"
        + metrics));
  }

  private JsonNode auditLine(String decisionId) throws IOException {
    for (String l : Files.readAllLines(server.dir.resolve("audit.jsonl"))) {
      JsonNode j = TestServer.JSON.readTree(l);
      if (decisionId.equals(j.path("decisionId").asText())) {
        return j;
      }
    }
    return null;
  }

  private JsonNode inspect(String recipient) {
    TestServer.Reply r = server.get("/v1/recipients/" + recipient);
    assertThat(r.status()).isEqualTo(200);
    return r.body();
  }

  private JsonNode decide(String body) {
    TestServer.Reply r = server.post("/v1/decisions", body);
    assertThat(r.status()).as("%s -> %s", body, r.body()).isEqualTo(200);
    return r.body();
  }

  private String get(String path) {
    return server.get(path).raw().body();
  }
}
