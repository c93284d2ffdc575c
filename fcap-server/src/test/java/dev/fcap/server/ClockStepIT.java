package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.ManualClock;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A server on the seed policy whose wall clock and monotonic clock the test drives: a step of the
 * wall clock, forward or back, neither frees nor freezes the embedded store's windows; the step is
 * logged once and counted in {@code /metrics}.
 */
class ClockStepIT {
  private final ManualClock wall = new ManualClock(System.currentTimeMillis());
  private final AtomicLong monotonic = new AtomicLong(1_000_000_000L);
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final ByteArrayOutputStream log = new ByteArrayOutputStream();
  private PrintStream err;
  private FcapServer server;

  @BeforeEach
  void start() throws IOException {
    err = System.err;
    System.setErr(new PrintStream(new Tee(err, log), true, StandardCharsets.UTF_8));
    Path dir = Files.createTempDirectory("fcap-clock-step");
    ServerConfig config = ConfigLoader.load(null, Map.of(), Map.of("listen", "127.0.0.1:0",
        "rules.source", dir.resolve("rules.yaml").toString(), "audit.sink", "none", "store.fsync", "off",
        "shutdown.grace", "2s"));
    server = FcapServer.builder(config).clock(wall).monotonicNanos(monotonic::get).start();
  }

  @AfterEach
  void stop() {
    try {
      server.close();
    } finally {
      System.setErr(err);
    }
  }

  /** Real time passes: both clocks move together. */
  private void pass(long ms) {
    wall.advance(ms);
    monotonic.addAndGet(ms * 1_000_000);
  }

  @Test
  void aForwardStepOf61SecondsDoesNotDoubleTheCap() {
    admitFifteen("alice");
    wall.advanceSeconds(61);
    pass(1_000);
    JsonNode sixteenth = decide("alice", "a second later");
    assertThat(sixteenth.get("allowed").asBoolean()).as("the 16th, a second after the step").isFalse();
    assertThat(sixteenth.get("blockedBy").toString()).contains("recipient-per-minute");

    String metrics = get("/metrics");
    assertThat(metrics).contains("fcap_clock_steps_total 1.0");
    assertThat(gauge(metrics, "fcap_clock_offset_seconds")).isBetween(60.8, 61.0);
    assertThat(logged()).as("one line for the step").hasSize(1);
    assertThat(logged().get(0)).contains("stepped +61.0 s");

    // the window of the minute frees after a minute of real time, less what the slew takes (10 %)
    pass(53_000);
    assertThat(decide("alice", "54 s later").get("allowed").asBoolean()).isFalse();
    pass(2_000);
    assertThat(decide("alice", "56 s later").get("allowed").asBoolean()).isTrue();
    assertThat(logged()).as("still one line").hasSize(1);
  }

  @Test
  void aBackwardStepDoesNotFreezeTheWindow() {
    admitFifteen("bob");
    wall.advanceSeconds(-120);
    pass(60_000);
    assertThat(decide("bob", "a minute later").get("allowed").asBoolean()).as("at 90 % of real time").isFalse();
    pass(7_000);
    assertThat(decide("bob", "67 s later").get("allowed").asBoolean()).as("not frozen for two more minutes").isTrue();
    assertThat(get("/metrics")).contains("fcap_clock_steps_total 1.0");
    assertThat(logged().get(0)).contains("stepped -120.0 s");
  }

  private void admitFifteen(String recipient) {
    for (int i = 0; i < 15; i++) {
      assertThat(decide(recipient, "message " + i).get("allowed").asBoolean()).as("admission %d", i).isTrue();
    }
    assertThat(decide(recipient, "one more").get("allowed").asBoolean()).as("the 16th at once").isFalse();
  }

  private List<String> logged() {
    return log.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains("the wall clock stepped")).toList();
  }

  private static double gauge(String metrics, String name) {
    return Double.parseDouble(metrics.lines().filter(l -> l.startsWith(name + " ")).findFirst().orElseThrow()
        .substring(name.length() + 1));
  }

  private JsonNode decide(String recipient, String content) {
    try {
      return TestServer.JSON.readTree(send(HttpRequest.newBuilder(URI.create(base() + "/v1/decisions"))
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
              "{\"recipient\": \"" + recipient + "\", \"content\": \"" + content + "\"}"))));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String get(String path) {
    return send(HttpRequest.newBuilder(URI.create(base() + path)).GET());
  }

  private String base() {
    return "http://127.0.0.1:" + server.port();
  }

  private String send(HttpRequest.Builder request) {
    try {
      HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      return r.body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Writes to the console and keeps a copy for the assertions. */
  private static final class Tee extends OutputStream {
    private final OutputStream console;
    private final OutputStream copy;

    Tee(OutputStream console, OutputStream copy) {
      this.console = console;
      this.copy = copy;
    }

    @Override
    public void write(int b) throws IOException {
      console.write(b);
      copy.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      console.write(b, off, len);
      copy.write(b, off, len);
    }
  }
}
