package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Slow bodies, and shapes that fit the byte limit but not the server's
 * patience. Every refusal is a 4xx naming the field, and records nothing.
 */
class HostileInputIT {
  static TestServer s;

  @BeforeAll
  static void start() {
    s = TestServer.start(null, Map.of("http.requestTimeout", "1s", "limits.maxAttributes", "8",
        "limits.maxJsonDepth", "8", "limits.maxRulesPerPolicy", "5"));
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  /**
   * {@code Content-Length: 100} with a body of {@code {}}: answered after the request timeout with 408,
   * never a 500; 12 such connections write one log line, not 12 stack traces.
   */
  @Test
  void aSlowBodyIs408WithOneLogLine() throws Exception {
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(new TeeStream(err, captured), true, StandardCharsets.UTF_8));
    ExecutorService pool = Executors.newFixedThreadPool(12);
    try {
      List<CompletableFuture<RawHttp.Response>> replies = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        replies.add(CompletableFuture.supplyAsync(() -> RawHttp.send(s.server.port(), "POST", "/v1/decisions",
            Map.of("Content-Type", "application/json", "Content-Length", "100"), "{"), pool));
      }
      for (CompletableFuture<RawHttp.Response> f : replies) {
        RawHttp.Response r = f.join();
        assertThat(r.status()).isEqualTo(408);
        assertThat(r.errorCode()).isEqualTo("request_timeout");
        assertThat(r.body()).doesNotContain("Exception");
      }
    } finally {
      pool.shutdownNow();
      System.setErr(err);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    assertThat(log.lines().filter(l -> l.contains("request timed out"))).hasSize(1);
    assertThat(log).doesNotContain("RequestTimeoutException").doesNotContain("\tat ");
    assertThat(s.get("/metrics").raw().body()).contains("fcap_http_refused_total{reason=\"request_timeout\"} 12.0");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "blank recipient          | {\"recipient\": \"   \"}                                   | invalid_field | recipient",
      "nbsp recipient           | {\"recipient\": \"\\u00a0\"}                              | invalid_field | recipient",
      "blank channel            | {\"recipient\": \"r\", \"channel\": \" \"}                  | invalid_field | channel",
      "blank attribute name     | {\"recipient\": \"r\", \"attributes\": {\" \": \"x\"}}      | invalid_field | attributes",
      "blank attribute value    | {\"recipient\": \"r\", \"attributes\": {\"a\": \"\\t\"}}    | invalid_field | attributes.a",
      "too deep                 | {\"recipient\": \"r\", \"x\": [[[[[[[[[1]]]]]]]]]}          | too_deep      | x[0][0][0][0][0][0][0]",
      "long attribute name      | {\"recipient\": \"r\", \"attributes\": {\"NAME\": \"v\"}}   | too_long      | attributes",
      "long attribute value     | {\"recipient\": \"r\", \"attributes\": {\"a\": \"VALUE\"}}  | too_long      | attributes.a",
  })
  void refusedWithTheField(String name, String body, String code, String field) {
    String b = body.replace("NAME", "n".repeat(129)).replace("VALUE", "v".repeat(1025));
    TestServer.Reply r = s.decide(b);
    assertThat(r.status()).as(name).isEqualTo(400);
    assertThat(r.errorCode()).as(name).isEqualTo(code);
    assertThat(r.errorField()).as(name).isEqualTo(field);
    assertThat(r.body().path("error").path("message").asText()).as(name).isNotBlank();
    nothingRecorded();
  }

  /** 200,000 attributes in one message cost 1-2 s of CPU each; now the body is refused at the ninth name. */
  @Test
  void manyAttributesAreRefusedNamingTheField() {
    StringBuilder b = new StringBuilder("{\"recipient\": \"r\", \"attributes\": {");
    for (int i = 0; i < 200_000; i++) {
      b.append(i == 0 ? "" : ",").append("\"a").append(i).append("\":\"v\"");
    }
    TestServer.Reply r = s.decide(b.append("}}").toString());
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.errorCode()).isEqualTo("too_many_attributes");
    assertThat(r.errorField()).isEqualTo("attributes");
    assertThat(r.body().path("error").path("message").asText()).contains("limits.maxAttributes");
    StringBuilder batch = new StringBuilder("{\"requests\": [{\"recipient\": \"r\"}, {\"recipient\": \"r\", "
        + "\"attributes\": {");
    for (int i = 0; i < 9; i++) {
      batch.append(i == 0 ? "" : ",").append("\"a").append(i).append("\":\"v\"");
    }
    TestServer.Reply rb = s.post("/v1/decisions/batch", batch.append("}}]}").toString());
    assertThat(rb.status()).isEqualTo(400);
    assertThat(rb.errorField()).isEqualTo("requests[1].attributes");
    // a shape refusal is counted with the refusals before any handler, whichever endpoint read the body
    assertThat(s.get("/metrics").raw().body()).contains("fcap_http_refused_total{reason=\"too_many_attributes\"} 2.0");
    nothingRecorded();
    // at the limit is fine
    StringBuilder ok = new StringBuilder("{\"recipient\": \"ok-8\", \"attributes\": {");
    for (int i = 0; i < 8; i++) {
      ok.append(i == 0 ? "" : ",").append("\"a").append(i).append("\":\"v\"");
    }
    assertThat(s.decide(ok.append("}}").toString()).status()).isEqualTo(200);
  }

  @Test
  void rulesPerPolicyAreLimited() {
    StringBuilder rules = new StringBuilder("{\"rules\": [");
    for (int i = 0; i < 6; i++) {
      rules.append(i == 0 ? "" : ",").append("{\"id\":\"r").append(i)
          .append("\",\"limit\":1,\"window\":\"1m\",\"key\":[\"recipient\"]}");
    }
    String body = rules.append("]}").toString();
    TestServer.Reply put = s.put("/v1/rules?tenant=many", body, Map.of());
    assertThat(put.status()).isEqualTo(400);
    assertThat(put.errorCode()).isEqualTo("too_many_rules");
    assertThat(put.errorField()).isEqualTo("rules");
    assertThat(s.post("/v1/rules/validate?tenant=many", body).errorCode()).isEqualTo("too_many_rules");
    assertThat(s.get("/v1/rules?tenant=many").body().get("version").asLong()).isZero();
  }

  @Test
  void anEmptyKeyIsRefusedAndTenantIsTheExplicitTenantWideKey() {
    TestServer.Reply empty = s.post("/v1/rules?tenant=wide", "{\"id\":\"all\",\"limit\":1,\"window\":\"1m\",\"key\":[]}");
    assertThat(empty.status()).isEqualTo(400);
    assertThat(empty.errorField()).isEqualTo("key");
    assertThat(empty.body().path("error").path("message").asText()).contains("[tenant]");
    TestServer.Reply wide = s.post("/v1/rules?tenant=wide",
        "{\"id\":\"all\",\"limit\":1,\"window\":\"1m\",\"key\":[\"tenant\"]}");
    assertThat(wide.status()).isEqualTo(201);
    assertThat(wide.body().get("rules").get(0).get("key").toString()).isEqualTo("[\"tenant\"]");
    // one counter for the tenant: a second recipient is refused
    assertThat(s.decide("{\"tenant\":\"wide\",\"recipient\":\"a\"}").body().get("allowed").asBoolean()).isTrue();
    assertThat(s.decide("{\"tenant\":\"wide\",\"recipient\":\"b\"}").body().get("allowed").asBoolean()).isFalse();
    TestServer.Reply blankMatch = s.post("/v1/rules?tenant=wide", "{\"id\":\"m\",\"limit\":1,\"window\":\"1m\","
        + "\"key\":[\"recipient\"],\"match\":{\"channel\":[\" \"]}}");
    assertThat(blankMatch.status()).isEqualTo(400);
    assertThat(blankMatch.errorField()).isEqualTo("match.channel");
  }

  private static void nothingRecorded() {
    assertThat(s.get("/v1/recipients/r").body().get("counters")).isEmpty();
    assertThat(s.get("/v1/recipients/%20%20%20").errorField()).isEqualTo("recipient");
  }

  /** Writes to two streams: the test's capture and the real stderr. */
  private static final class TeeStream extends java.io.OutputStream {
    private final java.io.OutputStream a;
    private final java.io.OutputStream b;

    TeeStream(java.io.OutputStream a, java.io.OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public synchronized void write(int c) throws java.io.IOException {
      a.write(c);
      b.write(c);
    }

    @Override
    public synchronized void write(byte[] buf, int off, int len) throws java.io.IOException {
      a.write(buf, off, len);
      b.write(buf, off, len);
    }
  }
}
