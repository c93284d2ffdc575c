package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Without API keys the server binds to loopback only, whatever {@code listen} asks for. */
class LoopbackOnlyIT {

  @Test
  void noKeysMeansLoopbackEvenWhenAskedForEveryInterface() {
    try (TestServer s = TestServer.start(null, Map.of("listen", "0.0.0.0:0"))) {
      assertThat(s.server.uri()).startsWith("http://127.0.0.1:");
      assertThat(s.server.describe()).contains("no API keys: loopback only");
      assertThat(s.get("/health").status()).isEqualTo(200);
    }
  }

  @Test
  void withKeysTheConfiguredAddressIsUsed() {
    String keys = "[{name: k, sha256: " + AuthIT.hash("s") + ", tenants: ['*'], roles: [read]}]";
    try (TestServer s = TestServer.start(null, Map.of("listen", "127.0.0.2:0", "apiKeys", keys))) {
      assertThat(s.server.uri()).startsWith("http://127.0.0.2:");
      assertThat(s.server.describe()).contains("API keys: 1");
    }
  }
}
