package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.Server;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A keyless server driven by a web page. Cross-site requests (CSRF) and DNS
 * rebinding (a foreign {@code Host}) are sent as real requests, and once from headless Chromium on a
 * second origin; each must be refused and record nothing. The console's own requests keep working
 * ({@code ConsoleIT}).
 */
class BrowserSafetyIT {
  private static final String CSRF_RULE = "{\"id\":\"csrf-block-all\",\"limit\":1,\"window\":\"400d\","
      + "\"key\":[\"recipient\"]}";
  static TestServer s;

  @BeforeAll
  static void start() {
    s = TestServer.seed();
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  private static RawHttp.Response raw(String method, String path, Map<String, String> headers, String body) {
    return RawHttp.send(s.server.port(), method, path, headers, body);
  }

  private static void noCsrfRule() {
    assertThat(s.get("/v1/rules").body().toString()).doesNotContain("csrf-block-all");
  }

  /** The issue's curl: text/plain from evil.example answered 201. */
  @Test
  void theIssuesCrossSiteRuleIsRefused() {
    RawHttp.Response r = raw("POST", "/v1/rules", Map.of("Content-Type", "text/plain",
        "Origin", "http://evil.example"), CSRF_RULE);
    assertThat(r.status()).isEqualTo(403);
    assertThat(r.errorCode()).isEqualTo("forbidden_origin");
    assertThat(r.json().path("error").path("field").asText()).isEqualTo("Origin");
    noCsrfRule();
  }

  @ParameterizedTest
  @ValueSource(strings = {"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x", "application/jsonx", "text/json"})
  void bodiesThatAPageCanSendWithoutPreflightAreRefused(String type) {
    RawHttp.Response r = raw("POST", "/v1/rules", Map.of("Content-Type", type), CSRF_RULE);
    assertThat(r.status()).isEqualTo(415);
    assertThat(r.errorCode()).isEqualTo("unsupported_media_type");
    assertThat(r.json().path("error").path("field").asText()).isEqualTo("Content-Type");
    RawHttp.Response decide = raw("POST", "/v1/decisions", Map.of("Content-Type", type),
        "{\"recipient\":\"csrf-victim\"}");
    assertThat(decide.status()).isEqualTo(415);
    noCsrfRule();
    assertThat(s.get("/v1/recipients/csrf-victim").body().get("counters")).isEmpty();
  }

  @Test
  void aBodyWithoutContentTypeIsRefused() {
    RawHttp.Response r = raw("POST", "/v1/decisions", Map.of(), "{\"recipient\":\"no-type\"}");
    assertThat(r.status()).isEqualTo(415);
    assertThat(s.get("/v1/recipients/no-type").body().get("counters")).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"})
  void jsonWithOrWithoutCharsetIsAccepted(String type) {
    RawHttp.Response r = raw("POST", "/v1/decisions", Map.of("Content-Type", type), "{\"recipient\":\"typed\"}");
    assertThat(r.status()).isEqualTo(200);
  }

  @ParameterizedTest
  @ValueSource(strings = {"http://evil.example", "null", "http://127.0.0.1.evil.example", "https://localhost.evil"})
  void aForeignOriginIsRefusedEvenWithJson(String origin) {
    RawHttp.Response r = raw("POST", "/v1/rules", Map.of("Content-Type", "application/json", "Origin", origin),
        CSRF_RULE);
    assertThat(r.status()).isEqualTo(403);
    assertThat(r.errorCode()).isEqualTo("forbidden_origin");
    RawHttp.Response release = raw("POST", "/v1/decisions/x/release", Map.of("Origin", origin), null);
    assertThat(release.status()).isEqualTo(403);
    noCsrfRule();
  }

  /** DNS rebinding: the page's own name now points at 127.0.0.1, so the browser sends that name as Host. */
  @ParameterizedTest
  @ValueSource(strings = {"evil.example", "evil.example:8080", "127.0.0.1.nip.io", "localhost.evil.example"})
  void aForeignHostIsRefused(String host) {
    RawHttp.Response read = raw("GET", "/v1/rules", Map.of("Host", host), null);
    assertThat(read.status()).isEqualTo(403);
    assertThat(read.errorCode()).isEqualTo("forbidden_host");
    assertThat(read.body()).doesNotContain("recipient-per-minute");
    RawHttp.Response write = raw("POST", "/v1/rules", Map.of("Host", host, "Content-Type", "application/json"),
        CSRF_RULE);
    assertThat(write.status()).isEqualTo(403);
    assertThat(raw("GET", "/metrics", Map.of("Host", host), null).status()).isEqualTo(403);
    assertThat(raw("GET", "/", Map.of("Host", host), null).status()).isEqualTo(403);
    noCsrfRule();
  }

  @ParameterizedTest
  @ValueSource(strings = {"127.0.0.1", "localhost", "LOCALHOST", "[::1]", "127.0.0.2", "fcap.localhost"})
  void loopbackHostsAreAnswered(String host) {
    RawHttp.Response r = raw("GET", "/v1/rules", Map.of("Host", host + ":" + s.server.port()), null);
    assertThat(r.status()).isEqualTo(200);
  }

  @Test
  void theServersOwnOriginIsAccepted() {
    String origin = "http://127.0.0.1:" + s.server.port();
    RawHttp.Response r = raw("POST", "/v1/decisions", Map.of("Content-Type", "application/json", "Origin", origin),
        "{\"recipient\":\"same-origin\"}");
    assertThat(r.status()).isEqualTo(200);
  }

  @Test
  void configuredHostsAndOriginsAreAccepted() {
    try (TestServer t = TestServer.start(null, Map.of("http.allowedHosts", "[fcap.internal]",
        "http.allowedOrigins", "[http://tools.example:3000]"))) {
      int port = t.server.port();
      assertThat(RawHttp.send(port, "GET", "/v1/rules", Map.of("Host", "fcap.internal:" + port), null).status())
          .isEqualTo(200);
      assertThat(RawHttp.send(port, "POST", "/v1/decisions", Map.of("Content-Type", "application/json",
          "Origin", "http://tools.example:3000"), "{\"recipient\":\"tools\"}").status()).isEqualTo(200);
      assertThat(RawHttp.send(port, "GET", "/v1/rules", Map.of("Host", "other.internal"), null).status())
          .isEqualTo(403);
    }
  }

  /**
   * A page on a second origin (localhost on another port) tries what a hostile page would: a no-cors
   * text/plain POST (no preflight: it reaches the server), a form post, a JSON fetch (preflighted). The
   * server must refuse each one that reaches it, and no rule may appear.
   */
  @Test
  void aPageOnAnotherOriginCannotAddARule() throws Exception {
    String target = "http://127.0.0.1:" + s.server.port();
    String page = """
        <!doctype html><html><body>
        <form id="f" method="POST" action="TARGET/v1/rules" enctype="text/plain" target="sink">
          <input name='{"id":"csrf-form","limit":1,"window":"400d","key":["recipient"],"x":"' value='"}'>
        </form>
        <iframe name="sink"></iframe>
        <script>
          window.done = [];
          fetch('TARGET/v1/rules', {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'},
              body: 'RULE'}).then(() => done.push('no-cors')).catch(() => done.push('no-cors'));
          fetch('TARGET/v1/rules', {method: 'POST', headers: {'Content-Type': 'application/json'},
              body: 'RULE'}).then(() => done.push('cors')).catch(() => done.push('cors'));
          document.getElementById('f').submit();
        </script></body></html>
        """.replace("TARGET", target).replace("RULE", CSRF_RULE.replace("'", "\\'"));
    Server evil = Server.builder().http(new java.net.InetSocketAddress("127.0.0.1", 0))
        .service("/", (ctx, req) -> HttpResponse.of(HttpStatus.OK, MediaType.HTML_UTF_8, page)).build();
    evil.start().join();
    double before = refused("forbidden_origin");
    try (Browser b = Browser.start()) {
      b.open("http://localhost:" + evil.activeLocalPort() + "/");
      b.waitUntil("both fetches settled", () -> ((Number) b.script("return window.done.length")).intValue() == 2);
      // the no-cors POST and the form post reach the server and are refused there
      b.waitUntil("the server refused the page's requests", () -> refused("forbidden_origin") >= before + 2);
    } finally {
      evil.stop().join();
    }
    assertThat(s.get("/v1/rules").body().toString()).doesNotContain("csrf-block-all").doesNotContain("csrf-form");
  }

  private static double refused(String reason) {
    String metrics = s.get("/metrics").raw().body();
    return metrics.lines().filter(l -> l.startsWith("fcap_http_refused_total{") && l.contains("reason=\"" + reason
        + "\"")).mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
  }
}
