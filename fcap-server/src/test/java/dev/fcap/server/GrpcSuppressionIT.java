package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.Decision;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Message;
import dev.fcap.server.grpc.v1.RecipientRequest;
import dev.fcap.server.grpc.v1.SuppressionEntry;
import dev.fcap.server.grpc.v1.SuppressionRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Suppression entries over gRPC: put, get, a refused decision with the reason, delete, bad input. */
class GrpcSuppressionIT {
  @Test
  void putGetDecideAndDelete() {
    try (TestServer s = TestServer.start(null, Map.of())) {
      FcapServiceBlockingStub grpc = GrpcClients.builder(s.base()).build(FcapServiceBlockingStub.class);
      SuppressionEntry put = grpc.putSuppression(SuppressionRequest.newBuilder().setRecipient("g1").addChannels("sms")
          .setReason("replied STOP").build());
      assertThat(put.getAddedBy()).isEqualTo("local");
      assertThat(put.getExpiresAt()).isEqualTo(-1);
      assertThat(grpc.getSuppression(RecipientRequest.newBuilder().setRecipient("g1").build()).getChannelsList())
          .containsExactly("sms");
      Decision d = grpc.decide(DecideRequest.newBuilder().setMessage(Message.newBuilder().setRecipient("g1")
          .setChannel("sms")).build());
      assertThat(d.getAllowed()).isFalse();
      assertThat(d.getBlockedByList()).containsExactly("suppressed");
      assertThat(d.getSuppressedReason()).isEqualTo("replied STOP");
      assertThat(grpc.deleteSuppression(RecipientRequest.newBuilder().setRecipient("g1").build()).getRemoved())
          .isTrue();
      assertThatThrownBy(() -> grpc.getSuppression(RecipientRequest.newBuilder().setRecipient("g1").build()))
          .isInstanceOfSatisfying(StatusRuntimeException.class,
              e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
      assertThatThrownBy(() -> grpc.putSuppression(SuppressionRequest.newBuilder().setRecipient("g2")
          .setExpiresAt(1000).build()))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains("(field expiresAt)");
          });
    }
  }
}
