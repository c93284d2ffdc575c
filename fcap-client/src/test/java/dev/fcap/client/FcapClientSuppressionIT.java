package dev.fcap.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The client's suppression calls against a real server: add, read, a refused decision, remove, bad input. */
class FcapClientSuppressionIT {
  @Test
  void aSuppressedRecipientIsRefusedWithTheReasonUntilRemoved() {
    try (RealServer server = RealServer.start()) {
      FcapClient fcap = FcapClient.create(ClientOptions.builder(server.url()).requestTimeout(Duration.ofSeconds(5))
          .build());
      Suppression added = fcap.suppress(null, "+1 555", List.of("sms"), List.of(), "replied STOP", -1);
      assertThat(added.recipient()).isEqualTo("+1 555");
      assertThat(added.channels()).containsExactly("sms");
      assertThat(fcap.suppression(null, "+1 555")).contains(added);
      Decision refused = fcap.decide(Message.builder("+1 555").channel("sms").build());
      assertThat(refused.allowed()).isFalse();
      assertThat(refused.blockedBy()).containsExactly("suppressed");
      assertThat(refused.suppressedReason()).isEqualTo("replied STOP");
      assertThat(fcap.decide(Message.builder("+1 555").channel("email").build()).suppressedReason()).isNull();
      assertThat(fcap.unsuppress(null, "+1 555")).isTrue();
      assertThat(fcap.suppression(null, "+1 555")).isEmpty();
      assertThatThrownBy(() -> fcap.suppress(null, "r", List.of(), List.of(), "x", 1000))
          .isInstanceOfSatisfying(FcapException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.field()).isEqualTo("expiresAt");
          });
    }
  }
}
