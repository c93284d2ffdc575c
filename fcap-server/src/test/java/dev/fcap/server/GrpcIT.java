package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.BatchItem;
import dev.fcap.server.grpc.v1.BatchReply;
import dev.fcap.server.grpc.v1.BatchRequest;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.Decision;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Inspection;
import dev.fcap.server.grpc.v1.Message;
import dev.fcap.server.grpc.v1.RecipientRequest;
import dev.fcap.server.grpc.v1.ReleaseRequest;
import dev.fcap.server.grpc.v1.RulesRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The gRPC API on the same port, end to end. */
class GrpcIT {
  static TestServer s;
  static FcapServiceBlockingStub ops;

  @BeforeAll
  static void start() {
    String keys = "[{name: ops, sha256: " + AuthIT.hash("grpc-ops") + ", tenants: ['*'], roles: [decide, read, admin]},"
        + " {name: reader, sha256: " + AuthIT.hash("grpc-read") + ", tenants: [default], roles: [read]}]";
    s = TestServer.start(null, Map.of("apiKeys", keys));
    ops = stub("grpc-ops");
  }

  static FcapServiceBlockingStub stub(String key) {
    var b = GrpcClients.builder(s.base());
    if (key != null) {
      b.addHeader("authorization", "Bearer " + key);
    }
    return b.build(FcapServiceBlockingStub.class);
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  private static final long HOUR = 3_600_000;
  /** Sliding-log rules keyed by the recipient book; the local day's fixed window cannot. */
  private static final String BOOKABLE_RULES = """
      policies:
        - tenant: default
          rules:
            - {id: two-per-hour, limit: 2, window: 1h, key: [recipient]}
            - {id: smooth-digests, limit: 1, window: 2d, key: [recipient], algorithm: gcra,
               match: {category: [digest]}}
      """;

  static Message.Builder deferred(String recipient) {
    return Message.newBuilder().setRecipient(recipient).setDefer(true);
  }

  static DecideRequest decide(Message.Builder m) {
    return DecideRequest.newBuilder().setMessage(m).build();
  }

  @Test
  void aDeferredDecisionBooksTheSlotItsIdReleases() {
    try (TestServer booking = TestServer.start(BOOKABLE_RULES, Map.of())) {
      FcapServiceBlockingStub stub = GrpcClients.builder(booking.base()).build(FcapServiceBlockingStub.class);
      Decision first = stub.decide(decide(deferred("gd")));
      assertThat(first.getAllowed()).as("admitted now: the deferral changes nothing").isTrue();
      assertThat(first.getDeferred()).isFalse();
      assertThat(stub.decide(decide(deferred("gd"))).getAllowed()).isTrue();
      Decision tooSoon = stub.decide(decide(deferred("gd").setNotAfterMs(first.getTime() + 60_000)));
      assertThat(tooSoon.getAllowed()).isFalse();
      assertThat(tooSoon.getDeferred()).as("no slot by notAfter: refused as without defer").isFalse();

      Decision d = stub.decide(decide(deferred("gd").setMessageId("m-1")));
      assertThat(d.getAllowed()).isFalse();
      assertThat(d.getDeferred()).isTrue();
      assertThat(d.getSendAt()).as("when the first admitted message leaves the hour").isEqualTo(first.getTime() + HOUR);
      assertThat(d.getRetryAfterMs()).isEqualTo(d.getSendAt() - d.getTime());
      assertThat(d.getBlockedByList()).containsExactly("two-per-hour");
      Decision again = stub.decide(decide(deferred("gd").setMessageId("m-1")));
      assertThat(again.getReplayed()).isTrue();
      assertThat(again.getDeferred()).isTrue();
      assertThat(again.getSendAt()).as("a retry answers the same booking").isEqualTo(d.getSendAt());

      assertThat(stub.release(ReleaseRequest.newBuilder().setDecisionId(d.getDecisionId()).build()).getReleased())
          .isTrue();
      Decision rebooked = stub.decide(decide(deferred("gd")));
      assertThat(rebooked.getDeferred()).isTrue();
      assertThat(rebooked.getSendAt()).as("the released slot is free again").isEqualTo(d.getSendAt());
    }
  }

  @Test
  void eachDeferredMessageOfABatchSeesTheBookingsBeforeIt() {
    try (TestServer booking = TestServer.start(BOOKABLE_RULES, Map.of())) {
      FcapServiceBlockingStub stub = GrpcClients.builder(booking.base()).build(FcapServiceBlockingStub.class);
      BatchRequest.Builder batch = BatchRequest.newBuilder();
      for (int i = 0; i < 5; i++) {
        batch.addRequests(deferred("gb"));
      }
      List<Decision> d = stub.decideBatch(batch.build()).getResultsList().stream().map(BatchItem::getDecision)
          .toList();
      assertThat(d).extracting(Decision::getAllowed).containsExactly(true, true, false, false, false);
      assertThat(d).extracting(Decision::getDeferred).containsExactly(false, false, true, true, true);
      assertThat(d.get(2).getSendAt()).isEqualTo(d.get(0).getTime() + HOUR);
      assertThat(d.get(3).getSendAt()).isEqualTo(d.get(1).getTime() + HOUR);
      assertThat(d.get(4).getSendAt()).as("the hour after the two booked before it").isEqualTo(d.get(2).getSendAt()
          + HOUR);
      assertThat(d).extracting(Decision::getDecisionId).doesNotHaveDuplicates();
    }
  }

  @Test
  void aDeferralTheServerCannotHonourIsInvalidArgumentNamingItsField() {
    try (TestServer booking = TestServer.start(BOOKABLE_RULES, Map.of())) {
      FcapServiceBlockingStub stub = GrpcClients.builder(booking.base()).build(FcapServiceBlockingStub.class);
      assertThatThrownBy(() -> stub.decide(decide(deferred("gu").setCategory("digest"))))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).startsWith("defer_unsupported: ")
                .contains("smooth-digests").endsWith("(field defer)");
          });
      assertThatThrownBy(() -> stub.decide(decide(Message.newBuilder().setRecipient("gu").setNotAfterMs(1))))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).startsWith("invalid_field: ").endsWith("(field notAfter)");
          });
      long eightDays = System.currentTimeMillis() + 8 * 24 * HOUR;
      assertThatThrownBy(() -> stub.decide(decide(deferred("gu").setNotAfterMs(eightDays))))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
              assertThat(e.getStatus().getDescription()).startsWith("invalid_field: ").endsWith("(field notAfter)"));
      BatchReply reply = stub.decideBatch(BatchRequest.newBuilder().addRequests(deferred("gu"))
          .addRequests(deferred("gu").setCategory("digest")).addRequests(deferred("gu").setNotAfterMs(-5)).build());
      assertThat(reply.getResults(0).getDecision().getAllowed()).isTrue();
      assertThat(reply.getResults(1).getError().getCode()).isEqualTo("defer_unsupported");
      assertThat(reply.getResults(1).getError().getField()).isEqualTo("defer");
      assertThat(reply.getResults(2).getError().getCode()).isEqualTo("invalid_field");
      assertThat(reply.getResults(2).getError().getField()).isEqualTo("notAfter");
      assertThat(stub.inspect(RecipientRequest.newBuilder().setRecipient("gu").build()).getCountersList().stream()
          .mapToLong(c -> c.getUsed()).sum()).as("only the valid item counted").isEqualTo(1);
    }
  }

  static DecideRequest msg(String recipient, String content) {
    return DecideRequest.newBuilder().setMessage(Message.newBuilder().setRecipient(recipient).setContent(content))
        .build();
  }

  @Test
  void aDegradedDecisionSaysWhy() {
    FlakyStore store = new FlakyStore(dev.fcap.store.memory.MemoryStore.builder().build());
    try (TestServer full = TestServer.start(null, Map.of("failure.full", "deny"), store)) {
      FcapServiceBlockingStub stub = GrpcClients.builder(full.base()).build(FcapServiceBlockingStub.class);
      assertThat(stub.decide(msg("gf", "x")).hasDegradedReason()).as("not degraded: no reason").isFalse();
      store.mode = FlakyStore.Mode.FULL;
      Decision d = stub.decide(msg("gf", "x"));
      assertThat(d.getDegraded()).isTrue();
      assertThat(d.getDegradedReason()).isEqualTo("store_full");
      assertThat(d.getRetryAfterMs()).as("the store cannot say when room frees").isEqualTo(-1);
    }
  }

  @Test
  void seedScenarioOverGrpc() {
    assertThat(ops.decide(msg("g1", "hello")).getAllowed()).isTrue();
    assertThat(ops.decide(msg("g1", "hello")).getAllowed()).isTrue();
    Decision third = ops.decide(msg("g1", "hello"));
    assertThat(third.getAllowed()).isFalse();
    assertThat(third.getBlockedByList()).containsExactly("same-content-per-59s");
    assertThat(third.getRulesCount()).isEqualTo(4);
    Inspection i = ops.inspect(RecipientRequest.newBuilder().setRecipient("g1").build());
    assertThat(i.getCounters(0).getUsed()).isEqualTo(2);
    assertThat(i.getRecentDenialsCount()).isEqualTo(1);
  }

  @Test
  void batchReleaseResetAndRules() {
    BatchReply reply = ops.decideBatch(BatchRequest.newBuilder()
        .addRequests(Message.newBuilder().setRecipient("g2").setContent("x"))
        .addRequests(Message.newBuilder().setContent("no recipient"))
        .addRequests(Message.newBuilder().setRecipient("g2").setCost(-2)).build());
    assertThat(reply.getResults(0).getDecision().getAllowed()).isTrue();
    assertThat(reply.getResults(1).getError().getField()).isEqualTo("recipient");
    assertThat(reply.getResults(2).getError().getField()).isEqualTo("cost");
    String id = reply.getResults(0).getDecision().getDecisionId();
    assertThat(ops.release(ReleaseRequest.newBuilder().setDecisionId(id).build()).getReleased()).isTrue();
    assertThat(ops.inspect(RecipientRequest.newBuilder().setRecipient("g2").build()).getCountersList())
        .allSatisfy(c -> assertThat(c.getUsed()).isZero());
    ops.decide(msg("g2", "y"));
    assertThat(ops.reset(RecipientRequest.newBuilder().setRecipient("g2").build()).getReset()).isTrue();
    assertThat(ops.getRules(RulesRequest.newBuilder().build()).getPolicyJson()).contains("recipient-per-minute");
  }

  @Test
  void errorsMapToStatuses() {
    assertThatThrownBy(() -> stub(null).decide(msg("g3", "x")))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
    assertThatThrownBy(() -> stub("grpc-read").decide(msg("g3", "x")))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    assertThatThrownBy(() -> ops.decide(DecideRequest.newBuilder().setMessage(Message.newBuilder()
        .setRecipient("g3").setCost(0)).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).contains("cost");
        });
    assertThat(ops.inspect(RecipientRequest.newBuilder().setRecipient("g3").build()).getCountersCount()).isZero();
    // the decision id is checked as over HTTP (one place: DecisionService)
    assertThatThrownBy(() -> ops.release(ReleaseRequest.newBuilder().setDecisionId("x".repeat(4001)).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).contains("decisionId");
        });
    assertThatThrownBy(() -> ops.release(ReleaseRequest.newBuilder().setDecisionId("").build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
  }
}
