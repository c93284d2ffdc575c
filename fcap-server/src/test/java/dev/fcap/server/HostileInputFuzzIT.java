package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.BatchRequest;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Message;
import dev.fcap.server.grpc.v1.RecipientRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile bodies over real HTTP and gRPC: a corpus of known-bad inputs and seeded random mutations of
 * valid ones (the seed is printed with any failure). No input may get a 5xx (or gRPC INTERNAL or
 * UNKNOWN), every refusal is a JSON error with a code and a message, and a refused input changes
 * nothing: decisions counted, partitions held, policy version and history are the same before and
 * after. Bounded: about 1,200 requests, a few seconds.
 */
class HostileInputFuzzIT {
  private static final long SEED = Long.getLong("fuzz.seed", 20261122L);
  private static final int MUTATIONS = 80;
  static TestServer s;
  static FcapServiceBlockingStub grpc;

  @BeforeAll
  static void start() {
    s = TestServer.start(null, Map.of("limits.maxBodyBytes", "256KB", "limits.maxBatch", "50"));
    grpc = GrpcClients.builder(s.base()).build(FcapServiceBlockingStub.class);
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  /** What a refused input must leave as it was. */
  record State(double decisions, double partitions, long version, int history) {}

  static State state() {
    double decisions = 0;
    double partitions = 0;
    for (String l : s.get("/metrics").raw().body().split("\n")) {
      if (l.startsWith("fcap_decisions_total{")) {
        decisions += Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
      } else if (l.startsWith("fcap_store_partitions")) {
        partitions = Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
      }
    }
    JsonNode history = s.get("/v1/rules/history").body();
    return new State(decisions, partitions, history.get("version").asLong(), history.get("changes").size());
  }

  record Target(String method, String path, String valid) {}

  private static final List<Target> TARGETS = List.of(
      new Target("POST", "/v1/decisions", "{\"recipient\":\"f1\",\"channel\":\"sms\",\"content\":\"hi\","
          + "\"attributes\":{\"campaign\":\"c1\"},\"cost\":1,\"dryRun\":false}"),
      new Target("POST", "/v1/decisions/batch", "{\"requests\":[{\"recipient\":\"f2\"},{\"recipient\":\"f3\","
          + "\"tenant\":\"other\",\"contentKey\":\"k\"}],\"dryRun\":false}"),
      new Target("POST", "/v1/rules/validate", "{\"rules\":[{\"id\":\"v\",\"limit\":5,\"window\":\"1m\","
          + "\"key\":[\"recipient\"],\"match\":{\"channel\":[\"sms\"]}}]}"),
      new Target("POST", "/v1/rules", "{\"id\":\"fz\",\"limit\":5,\"window\":\"1m\",\"key\":[\"recipient\","
          + "\"attr:campaign\"],\"exempt\":{\"category\":\"otp\"},\"mode\":\"shadow\"}"),
      new Target("PUT", "/v1/rules/recipient-per-minute", "{\"limit\":15,\"window\":\"1m\",\"key\":[\"recipient\"]}"),
      new Target("POST", "/v1/decisions/abc/release", ""));

  private static final List<String> HOSTILE = List.of("", " ", "null", "[]", "{}", "\"x\"", "1e400", "{\"recipient\"",
      "{\"recipient\":\"\\u0000\"}", "{\"recipient\":\"\\ud800\"}", "{\"recipient\":\"\\u00a0\\u2007\"}",
      "{\"recipient\":\"r\",\"cost\":1e400}", "{\"recipient\":\"r\",\"cost\":99999999999999999999999}",
      "{\"recipient\":\"r\",\"cost\":-0}", "{\"recipient\":\"r\",\"cost\":1.0}", "{\"recipient\":\"r\",\"cost\":null}",
      "{\"recipient\":{\"$ne\":1}}", "{\"__proto__\":{\"a\":1},\"recipient\":\"r\"}",
      "{\"recipient\":\"r\",\"attributes\":{\"a\":null}}", "{\"recipient\":\"r\",\"tenant\":\"../../etc\"}",
      "{\"recipient\":\"r\",\"tenant\":\"" + "t".repeat(200) + "\"}", "{\"requests\":null}", "{\"requests\":{}}",
      "{\"requests\":[null,1,\"x\",[],{}]}", "{\"rules\":[{\"id\":\" \",\"limit\":1,\"window\":\"1m\",\"key\":[]}]}",
      "{\"rules\":[{\"id\":\"a\",\"limit\":1,\"window\":\"-1m\",\"key\":[\"tenant\",\"recipient\"]}]}",
      "{\"rules\":[{\"id\":\"a\",\"limit\":1,\"window\":\"1m\",\"key\":[\"attr: \"]}]}",
      "{\"id\":\"a\",\"limit\":1,\"window\":\"1m\",\"key\":[],\"match\":{\"channel\":[]}}",
      "[".repeat(5000) + "]".repeat(5000), "{\"a\":".repeat(3000) + "1" + "}".repeat(3000),
      "{\"recipient\":\"" + "x".repeat(300_000) + "\"}", "\uFEFF{\"recipient\":\"bom\"}",
      "{\"recipient\":\"r\"}{\"recipient\":\"s\"}", "{\"recipient\":\"r\",\"recipient\":\"s\"}");

  @Test
  void noHostileHttpBodyGetsA5xxOrChangesAnything() {
    Random random = new Random(SEED);
    State before = state();
    int refused = 0;
    for (Target t : TARGETS) {
      List<String> bodies = new ArrayList<>(HOSTILE);
      for (int i = 0; i < MUTATIONS; i++) {
        bodies.add(mutate(t.valid(), random));
      }
      for (String body : bodies) {
        TestServer.Reply r = s.send(t.method(), t.path(), body, Map.of());
        String what = "seed " + SEED + ": " + t.method() + " " + t.path() + " " + abbreviate(body);
        assertThat(r.status()).as(what).isLessThan(500);
        if (r.status() >= 400) {
          refused++;
          assertThat(r.body()).as(what).isNotNull();
          assertThat(r.errorCode()).as(what).isNotBlank();
          assertThat(r.body().path("error").path("message").asText()).as(what).isNotBlank();
          State after = state();
          assertThat(after).as(what).isEqualTo(before);
        } else {
          before = state();
        }
      }
    }
    assertThat(refused).as("the corpus is mostly hostile").isGreaterThan(TARGETS.size() * HOSTILE.size() / 2);
  }

  @Test
  void noHostileGrpcMessageGetsInternalOrChangesAnything() {
    Random random = new Random(SEED + 1);
    State before = state();
    for (int i = 0; i < 300; i++) {
      Message m = hostileMessage(random);
      try {
        if (random.nextBoolean()) {
          grpc.decide(DecideRequest.newBuilder().setMessage(m).build());
        } else {
          grpc.decideBatch(BatchRequest.newBuilder().addRequests(m).addRequests(hostileMessage(random)).build());
        }
        before = state();
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        assertThat(code).as("seed " + SEED + ": " + m + " -> " + e.getStatus())
            .isNotIn(Status.Code.INTERNAL, Status.Code.UNKNOWN);
        assertThat(state()).as("seed " + SEED + ": " + m).isEqualTo(before);
      }
      try {
        grpc.inspect(RecipientRequest.newBuilder().setRecipient(hostileString(random)).build());
      } catch (StatusRuntimeException e) {
        assertThat(e.getStatus().getCode()).isNotIn(Status.Code.INTERNAL, Status.Code.UNKNOWN);
      }
    }
  }

  private static Message hostileMessage(Random random) {
    Message.Builder b = Message.newBuilder().setRecipient(hostileString(random));
    if (random.nextBoolean()) {
      b.setTenant(hostileString(random));
    }
    if (random.nextBoolean()) {
      b.setChannel(hostileString(random));
    }
    if (random.nextInt(4) == 0) {
      b.setContent(hostileString(random));
    }
    if (random.nextInt(4) == 0) {
      b.setContentKey(hostileString(random));
    }
    int attributes = random.nextInt(4) == 0 ? random.nextInt(200) : random.nextInt(3);
    for (int i = 0; i < attributes; i++) {
      b.putAttributes(hostileString(random), hostileString(random));
    }
    if (random.nextBoolean()) {
      long[] costs = {-1, 0, 1, 2, 1_000_000_000L, 1_000_000_001L, Long.MAX_VALUE, Long.MIN_VALUE};
      b.setCost(costs[random.nextInt(costs.length)]);
    }
    return b.build();
  }

  private static String hostileString(Random random) {
    String[] pieces = {"", " ", "\t", "\u00a0", "\u0000", "\u0007", "a", "Z9", "{", "}", ":", "\"", "\\", "é",
        "\uD83D\uDE00", "\u202E", "%00", "../", "x".repeat(1100), "y".repeat(129)};
    StringBuilder sb = new StringBuilder();
    int n = random.nextInt(4);
    for (int i = 0; i < n; i++) {
      sb.append(pieces[random.nextInt(pieces.length)]);
    }
    return sb.toString();
  }

  /** One to three edits of the valid body: flip, delete, duplicate or insert bytes, truncate. */
  static String mutate(String valid, Random random) {
    byte[] b = valid.getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder(new String(b, StandardCharsets.ISO_8859_1));
    String[] inserts = {"{", "}", "[", "]", ",", ":", "\"", "\\", "null", "-1", "1e999", " ", "\u0000", "\"\":\"\"",
        "{\"a\":{\"b\":[[[[]]]]}}", "\"attributes\":{\"k\":\"v\"},"};
    int edits = 1 + random.nextInt(3);
    for (int e = 0; e < edits && sb.length() > 0; e++) {
      int at = random.nextInt(sb.length());
      switch (random.nextInt(5)) {
        case 0 -> sb.setCharAt(at, (char) (sb.charAt(at) ^ (1 << random.nextInt(7))));
        case 1 -> sb.deleteCharAt(at);
        case 2 -> sb.insert(at, inserts[random.nextInt(inserts.length)]);
        case 3 -> sb.insert(at, sb.substring(at, Math.min(sb.length(), at + 1 + random.nextInt(8))));
        default -> sb.setLength(at);
      }
    }
    return new String(sb.toString().getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
  }

  private static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "... (" + s.length() + " chars)";
  }
}
