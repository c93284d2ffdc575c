package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every bad input gets a 4xx with code, message and field, and nothing is recorded for it. */
class BadInputIT {
  static TestServer s;

  @BeforeAll
  static void start() {
    s = TestServer.start(null, Map.of("limits.maxBodyBytes", "64KB", "limits.maxBatch", "100"));
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "malformed JSON        | {\"recipient\": \"bad\",                     | invalid_json  |",
      "not an object         | [1, 2]                                       | invalid_type  |",
      "empty body            | ''                                           | invalid_json  |",
      "trailing garbage      | {\"recipient\": \"bad\"} x                   | invalid_json  |",
      "duplicate field       | {\"recipient\": \"bad\", \"recipient\": \"b\"} | invalid_json |",
      "missing recipient     | {\"content\": \"hello\"}                     | missing_field | recipient",
      "empty recipient       | {\"recipient\": \"\"}                        | invalid_field | recipient",
      "unknown field         | {\"recipient\": \"bad\", \"recipent\": \"x\"}  | unknown_field | recipent",
      "recipient wrong type  | {\"recipient\": 42}                          | invalid_type  | recipient",
      "cost wrong type       | {\"recipient\": \"bad\", \"cost\": \"2\"}      | invalid_type  | cost",
      "cost fraction         | {\"recipient\": \"bad\", \"cost\": 1.5}        | invalid_type  | cost",
      "negative cost         | {\"recipient\": \"bad\", \"cost\": -1}         | invalid_field | cost",
      "zero cost             | {\"recipient\": \"bad\", \"cost\": 0}          | invalid_field | cost",
      "dryRun wrong type     | {\"recipient\": \"bad\", \"dryRun\": \"yes\"}  | invalid_type  | dryRun",
      "attributes wrong type | {\"recipient\": \"bad\", \"attributes\": [1]}  | invalid_type  | attributes",
      "attribute value type  | {\"recipient\": \"bad\", \"attributes\": {\"a\": 1}} | invalid_type | attributes.a",
      "control character     | {\"recipient\": \"bad\\u0000x\"}             | invalid_field | recipient",
      "bad tenant            | {\"recipient\": \"bad\", \"tenant\": \"a b\"}  | invalid_field | tenant",
      "content and key       | {\"recipient\": \"bad\", \"content\": \"a\", \"contentKey\": \"b\"} | invalid_field | contentKey",
  })
  void refusedWithCodeAndField(String name, String body, String code, String field) {
    TestServer.Reply r = s.decide(body);
    assertThat(r.status()).as(name).isEqualTo(400);
    assertThat(r.errorCode()).as(name).isEqualTo(code);
    assertThat(r.body().get("error").get("message").asText()).as(name).isNotBlank();
    if (field != null) {
      assertThat(r.errorField()).as(name).isEqualTo(field);
    }
    assertNothingRecorded();
  }

  @Test
  void tooLongRecipient() {
    TestServer.Reply r = s.decide("{\"recipient\": \"" + "9".repeat(1025) + "\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.errorField()).isEqualTo("recipient");
    assertThat(r.body().get("error").get("message").asText()).contains("longer than 1024");
  }

  @Test
  void bodyTooLarge() {
    TestServer.Reply r = s.decide("{\"recipient\": \"bad\", \"content\": \"" + "x".repeat(70_000) + "\"}");
    assertThat(r.status()).isEqualTo(413);
    assertThat(r.errorCode()).isEqualTo("body_too_large");
    assertNothingRecorded();
  }

  @Test
  void batchTooLarge() {
    StringBuilder b = new StringBuilder("{\"requests\": [");
    for (int i = 0; i < 101; i++) {
      b.append(i == 0 ? "" : ",").append("{\"recipient\": \"bad\"}");
    }
    TestServer.Reply r = s.post("/v1/decisions/batch", b.append("]}").toString());
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.errorCode()).isEqualTo("batch_too_large");
    assertThat(r.errorField()).isEqualTo("requests");
    assertNothingRecorded();
  }

  @Test
  void batchWithoutRequestsOrWithUnknownField() {
    assertThat(s.post("/v1/decisions/batch", "{}").errorField()).isEqualTo("requests");
    assertThat(s.post("/v1/decisions/batch", "{\"requests\": [], \"dry\": true}").errorCode())
        .isEqualTo("unknown_field");
  }

  @Test
  void unknownEndpointAndMethod() {
    TestServer.Reply r = s.get("/v1/nothing");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.errorCode()).isEqualTo("not_found");
    TestServer.Reply m = s.get("/v1/decisions");
    assertThat(m.status()).isEqualTo(405);
    assertThat(m.body().get("error").has("field")).isTrue();
  }

  /**
   * RequestGuard reads a body to check it and passes the request on read: services that are not API
   * handlers (the 404 fallback, static files, a route of another method) must answer without it.
   */
  @Test
  void aBodySentWhereNoneIsReadIsAnsweredWithoutIt() {
    TestServer.Reply unknown = s.post("/v1/nothing", "{\"recipient\": \"+15550001\"}");
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.errorCode()).isEqualTo("not_found");
    assertThat(s.post("/openapi.json", "{\"a\": 1}").status()).isEqualTo(405);
    assertThat(s.post("/v1/recipients/x", "{\"a\": 1}").status()).isEqualTo(405);
    assertThat(s.post("/v1/decisions", "{\"recipient\": \"+15550001\"}").status()).as("and the API still reads one")
        .isEqualTo(200);
  }

  @Test
  void badTenantOnInspect() {
    TestServer.Reply r = s.get("/v1/recipients/x?tenant=bad%20tenant");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.errorField()).isEqualTo("tenant");
  }

  private static void assertNothingRecorded() {
    assertThat(s.get("/v1/recipients/bad").body().get("counters")).isEmpty();
  }
}
