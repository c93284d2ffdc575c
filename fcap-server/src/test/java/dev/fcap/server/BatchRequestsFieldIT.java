package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A batch's {@code requests} field: absent is {@code missing_field}, of the wrong JSON type {@code invalid_type}. */
class BatchRequestsFieldIT {
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
  void absentRequestsIsMissingField() {
    TestServer.Reply r = s.post("/v1/decisions/batch", "{\"dryRun\": true}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.body().at("/error/code").asText()).isEqualTo("missing_field");
    assertThat(r.body().at("/error/field").asText()).isEqualTo("requests");
  }

  @Test
  void requestsOfTheWrongTypeIsInvalidType() {
    for (String wrong : new String[] {"{}", "\"m\"", "7", "null"}) {
      TestServer.Reply r = s.post("/v1/decisions/batch", "{\"requests\": " + wrong + "}");
      assertThat(r.status()).as(wrong).isEqualTo(400);
      assertThat(r.body().at("/error/code").asText()).as(wrong).isEqualTo("invalid_type");
      assertThat(r.body().at("/error/field").asText()).as(wrong).isEqualTo("requests");
    }
  }
}
