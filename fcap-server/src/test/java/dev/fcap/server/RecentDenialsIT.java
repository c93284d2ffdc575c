package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.Denial;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Message;
import dev.fcap.server.grpc.v1.RecipientRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Recent denials over gRPC across restarts of the server on the same rules file (so the same
 * {@code recent-denials.json} beside it): kept by a graceful stop with their ids, times and rules, and
 * erased from the file by a gRPC reset before it answers, so the file a kill -9 would leave lacks them.
 * Memory-only store: the denials are the node's own, whatever the store.
 */
class RecentDenialsIT {
  private static final Map<String, String> MEMORY_ONLY = Map.of("store.fsync", "off");

  @Test
  void recentDenialsSurviveAGracefulRestartAndAResetErasesThemFromTheFile() throws Exception {
    Path rules;
    List<Denial> alice;
    List<Denial> bob;
    try (TestServer s = TestServer.start(null, MEMORY_ONLY)) {
      rules = s.dir.resolve("rules.yaml");
      FcapServiceBlockingStub grpc = stub(s);
      alice = denied(grpc, "alice", 2);
      bob = denied(grpc, "bob", 1);
    }
    Path saved = rules.resolveSibling("recent-denials.json");
    assertThat(saved).exists();

    try (TestServer s = TestServer.start(null, with("rules.source", rules.toString()))) {
      FcapServiceBlockingStub grpc = stub(s);
      assertThat(inspect(grpc, "alice")).as("ids, times and blockedBy, newest first").isEqualTo(alice);
      assertThat(inspect(grpc, "bob")).isEqualTo(bob);
      // the counts were memory only, so the reset holds none (false), and it erases the denials all the same
      assertThat(grpc.reset(RecipientRequest.newBuilder().setRecipient("alice").build()).getReset()).isFalse();
      assertThat(inspect(grpc, "alice")).isEmpty();

      // what a kill -9 now would leave on disk, started elsewhere while this server still runs
      Path afterKill = Files.createTempDirectory("fcap-after-kill");
      Files.copy(rules, afterKill.resolve("rules.yaml"));
      Files.copy(saved, afterKill.resolve("recent-denials.json"));
      try (TestServer next = TestServer.start(null, with("rules.source", afterKill.resolve("rules.yaml").toString()))) {
        FcapServiceBlockingStub after = stub(next);
        assertThat(inspect(after, "alice")).as("erased before the reset answered").isEmpty();
        assertThat(inspect(after, "bob")).isEqualTo(bob);
      }
    }
  }

  private static Map<String, String> with(String key, String value) {
    return Map.of("store.fsync", "off", key, value);
  }

  private static FcapServiceBlockingStub stub(TestServer s) {
    return GrpcClients.builder(s.base()).build(FcapServiceBlockingStub.class);
  }

  /** Sends the same content until {@code denials} were denied (the seed policy: 2 identical per 59 s). */
  private static List<Denial> denied(FcapServiceBlockingStub grpc, String recipient, int denials) {
    DecideRequest same = DecideRequest.newBuilder().setMessage(Message.newBuilder().setRecipient(recipient)
        .setContent("same").setChannel("sms")).build();
    int denied = 0;
    for (int i = 0; i < 20 && denied < denials; i++) {
      if (!grpc.decide(same).getAllowed()) {
        denied++;
      }
    }
    assertThat(denied).as("denials of " + recipient).isEqualTo(denials);
    List<Denial> shown = inspect(grpc, recipient);
    assertThat(shown).hasSize(denials);
    assertThat(shown.get(0).getBlockedByList()).contains("same-content-per-59s");
    assertThat(shown.get(0).getChannel()).isEqualTo("sms");
    return shown;
  }

  private static List<Denial> inspect(FcapServiceBlockingStub grpc, String recipient) {
    return grpc.inspect(RecipientRequest.newBuilder().setRecipient(recipient).build()).getRecentDenialsList();
  }
}
