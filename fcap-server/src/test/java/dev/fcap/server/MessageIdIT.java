package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.BatchRequest;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.Decision;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Message;
import dev.fcap.server.grpc.v1.ReleaseRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Idempotent decisions end to end: retry storms of message ids over HTTP and gRPC are counted once,
 * and a message id can be released (by whoever may use its tenant) once.
 */
class MessageIdIT {
  static TestServer s;
  static FcapServiceBlockingStub grpc;

  @BeforeAll
  static void start() {
    String keys = "[{name: ops, sha256: " + AuthIT.hash("mid-ops") + ", tenants: ['*'], roles: [decide, read]},"
        + " {name: shop, sha256: " + AuthIT.hash("mid-shop") + ", tenants: [shop], roles: [decide, read]}]";
    s = TestServer.start(null, Map.of("apiKeys", keys)).as("mid-ops");
    grpc = GrpcClients.builder(s.base()).addHeader("authorization", "Bearer mid-ops")
        .build(FcapServiceBlockingStub.class);
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  /** Eight threads each send every one of 5 message ids 4 times; returns message id -> decision ids seen. */
  private static Map<String, Set<String>> storm(IntFunction<String[]> send) throws InterruptedException {
    Map<String, Set<String>> seen = new ConcurrentHashMap<>();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      Thread th = new Thread(() -> {
        try {
          go.await();
          for (int i = 0; i < 20; i++) {
            String[] midAndDecision = send.apply(i % 5);
            seen.computeIfAbsent(midAndDecision[0], k -> ConcurrentHashMap.newKeySet()).add(midAndDecision[1]);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      th.start();
      threads.add(th);
    }
    go.countDown();
    for (Thread th : threads) {
      th.join(30_000);
    }
    return seen;
  }

  /** What the per-minute rule counted for {@code recipient} (0 when it holds nothing). */
  private static long used(String recipient) {
    for (var c : s.get("/v1/recipients/" + recipient).body().path("counters")) {
      if (c.path("rule").asText().equals("recipient-per-minute")) {
        return c.path("used").asLong();
      }
    }
    return 0;
  }

  @Test
  void anHttpRetryStormIsCountedOnce() throws Exception {
    Map<String, Set<String>> seen = storm(i -> {
      TestServer.Reply r = s.decide("{\"recipient\": \"storm-h\", \"messageId\": \"m-" + i + "\"}");
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.body().path("allowed").asBoolean()).isTrue();
      return new String[] {"m-" + i, r.body().path("decisionId").asText()};
    });
    assertThat(seen).hasSize(5);
    seen.values().forEach(ids -> assertThat(ids).hasSize(1));
    assertThat(used("storm-h")).isEqualTo(5);
    TestServer.Reply again = s.decide("{\"recipient\": \"storm-h\", \"messageId\": \"m-0\"}");
    assertThat(again.body().path("replayed").asBoolean()).isTrue();
    assertThat(again.body().path("decisionId").asText()).isEqualTo(seen.get("m-0").iterator().next());
    TestServer.Reply batch = s.post("/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"storm-h\", \"messageId\": "
        + "\"m-1\"}, {\"recipient\": \"storm-h\", \"messageId\": \"m-5\"}, {\"recipient\": \"storm-h\", \"messageId\": "
        + "\"m-5\"}]}");
    assertThat(batch.body().path("results").get(0).path("replayed").asBoolean()).isTrue();
    assertThat(batch.body().path("results").get(2).path("decisionId").asText())
        .isEqualTo(batch.body().path("results").get(1).path("decisionId").asText());
    assertThat(used("storm-h")).isEqualTo(6);
  }

  @Test
  void aGrpcRetryStormIsCountedOnce() throws Exception {
    Map<String, Set<String>> seen = storm(i -> {
      Decision d = grpc.decide(DecideRequest.newBuilder().setMessage(Message.newBuilder().setRecipient("storm-g")
          .setMessageId("m-" + i)).build());
      assertThat(d.getAllowed()).isTrue();
      return new String[] {"m-" + i, d.getDecisionId()};
    });
    assertThat(seen).hasSize(5);
    seen.values().forEach(ids -> assertThat(ids).hasSize(1));
    assertThat(used("storm-g")).isEqualTo(5);
    var batch = grpc.decideBatch(BatchRequest.newBuilder()
        .addRequests(Message.newBuilder().setRecipient("storm-g").setMessageId("m-2"))
        .addRequests(Message.newBuilder().setRecipient("storm-g").setMessageId("m-9")).build());
    assertThat(batch.getResults(0).getDecision().getReplayed()).isTrue();
    assertThat(batch.getResults(1).getDecision().getReplayed()).isFalse();
    assertThat(used("storm-g")).isEqualTo(6);
  }

  @Test
  void aMessageIdIsReleasedOnceOverHttpAndGrpcAndOnlyByItsTenant() {
    assertThat(s.decide("{\"recipient\": \"rel\", \"messageId\": \"a\"}").body().path("allowed").asBoolean()).isTrue();
    assertThat(s.decide("{\"recipient\": \"rel\", \"messageId\": \"b\"}").body().path("allowed").asBoolean()).isTrue();
    assertThat(used("rel")).isEqualTo(2);
    TestServer.Reply released = s.post("/v1/messages/release", "{\"recipient\": \"rel\", \"messageId\": \"a\"}");
    assertThat(released.body().path("released").asBoolean()).isTrue();
    assertThat(s.post("/v1/messages/release", "{\"recipient\": \"rel\", \"messageId\": \"a\"}").body()
        .path("released").asBoolean()).isFalse();
    assertThat(grpc.release(ReleaseRequest.newBuilder().setMessage(Message.newBuilder().setRecipient("rel")
        .setMessageId("b")).build()).getReleased()).isTrue();
    assertThat(used("rel")).isZero();
    TestServer.Reply noId = s.post("/v1/messages/release", "{\"recipient\": \"rel\"}");
    assertThat(noId.status()).isEqualTo(400);
    assertThat(noId.errorField()).isEqualTo("messageId");
    TestServer.Reply badType = s.decide("{\"recipient\": \"rel\", \"messageId\": 7}");
    assertThat(badType.status()).isEqualTo(400);
    assertThat(badType.errorField()).isEqualTo("messageId");
    // a key of tenant shop may not release a message of the default tenant
    s.decide("{\"recipient\": \"rel\", \"messageId\": \"c\"}");
    TestServer.Reply foreign = s.as("mid-shop").post("/v1/messages/release",
        "{\"recipient\": \"rel\", \"messageId\": \"c\"}");
    s.as("mid-ops");
    assertThat(foreign.status()).isEqualTo(403);
    assertThat(used("rel")).isEqualTo(1);
  }
}
