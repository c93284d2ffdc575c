package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the README says of a decision's counts and of a release by message id, held to the server. */
class ReadmeClaimsIT {
  static final Path README = Path.of(System.getProperty("user.dir")).getParent().resolve("README.md");
  static TestServer s;

  @BeforeAll
  static void start() {
    s = TestServer.start(null, Map.of());
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  @Test
  void usedAndRemainingCountBeforeTheMessage() throws Exception {
    assertThat(Files.readString(README)).contains("`used` and `remaining` count what the window held *before* this "
        + "message");
    JsonNode first = s.post("/v1/decisions", "{\"recipient\": \"+15550010\"}").body();
    assertThat(outcome(first, "recipient-per-minute").path("used").asLong()).isZero();
    assertThat(outcome(first, "recipient-per-minute").path("remaining").asLong()).isEqualTo(15);
    JsonNode second = s.post("/v1/decisions", "{\"recipient\": \"+15550010\"}").body();
    assertThat(outcome(second, "recipient-per-minute").path("used").asLong()).isEqualTo(1);
    assertThat(outcome(second, "recipient-per-minute").path("remaining").asLong()).isEqualTo(14);
  }

  @Test
  void releaseByMessageIdNeedsTheRecipient() throws Exception {
    assertThat(Files.readString(README)).contains("`{\"recipient\", \"messageId\"}`");
    TestServer.Reply r = s.post("/v1/messages/release", "{\"messageId\": \"m-1\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.body().at("/error/code").asText()).isEqualTo("missing_field");
    assertThat(r.body().at("/error/field").asText()).isEqualTo("recipient");
  }

  private static JsonNode outcome(JsonNode decision, String rule) {
    for (JsonNode o : decision.path("rules")) {
      if (o.path("id").asText().equals(rule)) {
        return o;
      }
    }
    throw new AssertionError("no outcome of " + rule + " in " + decision);
  }
}
