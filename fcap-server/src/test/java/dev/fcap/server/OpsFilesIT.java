package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.store.memory.MemoryStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operations files under {@code ops/} against a real server: {@code promtool check metrics} on
 * real scrapes, {@code promtool check rules} and {@code promtool test rules} on the alert rules, and
 * the Grafana dashboard's structure and PromQL, every metric it names being one the server exports.
 * promtool comes from Debian's {@code prometheus} package (scripts/test installs it); without it
 * this test fails, it never skips.
 */
class OpsFilesIT {
  static final Path OPS = Path.of("..", "ops").toAbsolutePath().normalize();
  static final Pattern METRIC = Pattern.compile("\\bfcap_[a-z0-9_]+");
  static TestServer s;
  static String healthy;
  static String degraded;

  @BeforeAll
  static void traffic() throws Exception {
    s = TestServer.seed();
    // 16 messages to one recipient: the 15th and 16th see less than 10 % of recipient-per-minute left
    for (int i = 0; i < 16; i++) {
      s.decide("{\"recipient\": \"near\", \"content\": \"m" + i + "\"}");
    }
    s.decide("{\"recipient\": \"dry\", \"dryRun\": true}");
    s.post("/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"b1\"}, {\"recipient\": \"b2\"}]}");
    // a third identical message within 59 s, deferred: booked for when the first leaves the window
    for (int i = 0; i < 3; i++) {
      s.decide("{\"recipient\": \"later\", \"content\": \"same\", \"defer\": true}");
    }
    s.get("/v1/recipients/near");
    healthy = s.get("/metrics").raw().body();

    // a degraded decision and a store error on a second server whose store is down
    FlakyStore down = new FlakyStore(MemoryStore.builder().build());
    down.mode = FlakyStore.Mode.DOWN;
    try (TestServer d = TestServer.start(null, Map.of(), down)) {
      // 503 store_unavailable until the outage is declared (failure.window), then the failure policy answers
      TestServer.Reply r = Awaitility.await("the outage is declared").atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20)).pollInSameThread()
          .until(() -> d.decide("{\"recipient\": \"r\"}"), reply -> reply.status() == 200);
      assertThat(r.body().get("degraded").asBoolean()).isTrue();
      degraded = d.get("/metrics").raw().body();
    }
  }

  @AfterAll
  static void stop() {
    s.close();
  }

  @Test
  void promtoolFindsNothingToSayAboutRealScrapes() throws Exception {
    for (String scrape : List.of(healthy, degraded)) {
      Run r = promtool(scrape, "check", "metrics");
      assertThat(r.output()).as("promtool check metrics").isEmpty();
      assertThat(r.exit()).isZero();
    }
    assertThat(healthy).contains("# HELP fcap_rule_near_limit_total", "# HELP fcap_deferred_decisions_total",
        "fcap_deferred_ahead_seconds_bucket{tenant=\"default\",le=\"60.0\"} 1");
    assertThat(degraded).contains("fcap_degraded_decisions_total{action=\"local\",tenant=\"default\"} 1.0");
  }

  /**
   * Every kind of refusal and error the server counts, then promtool on the scrape: a counter first
   * made by a refusal carries its HELP text like the others.
   */
  @Test
  void promtoolFindsNothingToSayAfterEveryKindOfRefusalAndError() throws Exception {
    try (TestServer open = TestServer.start(null, Map.of("http.requestTimeout", "1s", "limits.maxJsonDepth", "4",
        "limits.maxAttributes", "2", "limits.maxValueLength", "16"))) {
      int port = open.server.port();
      Map<String, String> json = Map.of("Content-Type", "application/json");
      assertThat(RawHttp.send(port, "GET", "/v1/rules", Map.of("Host", "evil.example"), null).status()).isEqualTo(403);
      assertThat(RawHttp.send(port, "POST", "/v1/decisions", Map.of("Content-Type", "application/json",
          "Origin", "http://evil.example"), "{\"recipient\": \"r\"}").status()).isEqualTo(403);
      assertThat(RawHttp.send(port, "POST", "/v1/decisions", Map.of("Content-Type", "text/plain"), "x").status())
          .isEqualTo(415);
      assertThat(RawHttp.send(port, "POST", "/v1/decisions", json, "{\"attributes\": {\"a\": [[[[[1]]]]]}}")
          .status()).isEqualTo(400);
      assertThat(RawHttp.send(port, "POST", "/v1/decisions", json,
          "{\"recipient\": \"r\", \"attributes\": {\"a\": 1, \"b\": 2, \"c\": 3}}").status()).isEqualTo(400);
      assertThat(RawHttp.send(port, "POST", "/v1/decisions", json, "{\"recipient\": \"" + "r".repeat(40) + "\"}")
          .status()).isEqualTo(400);
      assertThat(RawHttp.send(port, "POST", "/v1/decisions", Map.of("Content-Type", "application/json",
          "Content-Length", "100"), "{").status()).isEqualTo(408);
      assertThat(open.decide("{\"recipient\": 5}").status()).isEqualTo(400);
      assertThat(open.decide("not json").status()).isEqualTo(400);
      assertThat(open.get("/v1/nothing-here").status()).isEqualTo(404);
      assertThat(open.put("/v1/rules/recipient-per-day", "{\"limit\": 40, \"window\": \"24h\", "
          + "\"key\": [\"recipient\"]}", Map.of("If-Match", "\"999\"")).status()).isEqualTo(412);
      String scrape = open.get("/metrics").raw().body();
      assertThat(scrape).contains("fcap_http_refused_total{reason=\"request_timeout\"}",
          "fcap_http_refused_total{reason=\"too_deep\"}", "fcap_http_refused_total{reason=\"too_many_attributes\"}");
      assertPromtoolClean(scrape);
    }
    String keys = "[{name: k, sha256: " + AuthIT.hash("secret-k") + ", tenants: ['*'], roles: [decide]}, "
        + "{name: ops, sha256: " + AuthIT.hash("secret-ops") + ", tenants: ['*'], roles: [decide, read, admin]}]";
    try (TestServer keyed = TestServer.start(null, Map.of("apiKeys", keys))) {
      assertThat(keyed.as(null).decide("{\"recipient\": \"r\"}").status()).isEqualTo(401);
      assertThat(keyed.as("secret-x").decide("{\"recipient\": \"r\"}").status()).isEqualTo(401);
      assertThat(keyed.as(null).send("POST", "/v1/decisions", "{\"recipient\": \"r\"}",
          Map.of("Authorization", "Basic eDp5")).status()).isEqualTo(401);
      assertThat(keyed.as("secret-k").get("/v1/rules").status()).isEqualTo(403);
      String scrape = keyed.as("secret-ops").get("/metrics").raw().body();
      assertThat(scrape).contains("fcap_auth_failures_total{reason=\"missing\"}",
          "fcap_auth_failures_total{reason=\"unknown\"}");
      assertPromtoolClean(scrape);
    }
    assertPromtoolClean(degraded);
  }

  private static void assertPromtoolClean(String scrape) throws Exception {
    Run r = promtool(scrape, "check", "metrics");
    assertThat(r.output()).as("promtool check metrics on:\n" + scrape).isEmpty();
    assertThat(r.exit()).isZero();
    assertThat(scrape.lines().filter(l -> l.startsWith("# HELP ") && l.split(" ", 4).length < 4))
        .as("HELP lines without text").isEmpty();
  }

  @Test
  void nearLimitCountsDecisionsWithUnderTenPercentLeftAndLimitsAreGauges() {
    assertThat(sample(healthy, "fcap_rule_near_limit_total{rule=\"recipient-per-minute\",tenant=\"default\"}"))
        .isEqualTo(2.0);
    assertThat(sample(healthy, "fcap_rule_near_limit_total{rule=\"recipient-per-day\",tenant=\"default\"}"))
        .isZero();
    assertThat(sample(healthy, "fcap_rule_limit{mode=\"enforce\",rule=\"recipient-per-day\",tenant=\"default\"}"))
        .isEqualTo(50.0);
    assertThat(sample(healthy, "fcap_rule_limit{mode=\"enforce\",rule=\"same-content-per-59s\",tenant=\"default\"}"))
        .isEqualTo(2.0);
  }

  @Test
  void aLimitEditShowsInTheGaugeAndAnInvalidHandEditCountsAsAReloadFailure() throws Exception {
    try (TestServer t = TestServer.seed()) {
      t.put("/v1/rules/recipient-per-day", "{\"limit\": 40, \"window\": \"24h\", \"key\": [\"recipient\"]}", Map.of());
      assertThat(sample(t.get("/metrics").raw().body(),
          "fcap_rule_limit{mode=\"enforce\",rule=\"recipient-per-day\",tenant=\"default\"}")).isEqualTo(40.0);
      assertThat(sample(t.get("/metrics").raw().body(), "fcap_rules_reload_failures_total")).isZero();
      Files.writeString(t.dir.resolve("rules.yaml"), "policies: [{tenant: default, rules: [{id: x, limit: -1}]}]\n");
      double failures = Awaitility.await("the invalid edit is read").atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(20)).pollInSameThread()
          .until(() -> sample(t.get("/metrics").raw().body(), "fcap_rules_reload_failures_total"), f -> f != 0);
      assertThat(failures).isEqualTo(1.0);
    }
  }

  @Test
  void alertRulesAreValidAndTheirUnitTestsPass() throws Exception {
    Path rules = OPS.resolve("prometheus/fcap-alerts.yml");
    Run check = promtool(null, "check", "rules", rules.toString());
    assertThat(check.exit()).as(check.output()).isZero();
    Run test = promtool(null, "test", "rules", OPS.resolve("prometheus/fcap-alerts.test.yml").toString());
    assertThat(test.exit()).as(test.output()).isZero();
    assertThat(test.output()).contains("SUCCESS");
    assertThat(exported()).containsAll(metricsNamedIn(Files.readString(rules)));
  }

  @Test
  void dashboardIsWellFormedAndNamesOnlyExportedMetrics() throws Exception {
    JsonNode dash = TestServer.JSON.readTree(OPS.resolve("grafana/fcap-dashboard.json").toFile());
    assertThat(dash.path("uid").asText()).isNotEmpty();
    assertThat(dash.path("title").asText()).isNotEmpty();
    assertThat(dash.path("schemaVersion").asInt()).isGreaterThanOrEqualTo(30);
    Set<String> variables = new HashSet<>(Set.of("__rate_interval", "__interval"));
    dash.path("templating").path("list").forEach(v -> variables.add(v.get("name").asText()));
    assertThat(variables).contains("datasource", "job", "tenant");

    Set<Integer> ids = new HashSet<>();
    List<String> exprs = new ArrayList<>();
    List<int[]> boxes = new ArrayList<>();
    for (JsonNode p : dash.path("panels")) {
      assertThat(ids.add(p.path("id").asInt())).as("unique panel id " + p.path("id")).isTrue();
      assertThat(p.path("title").asText()).isNotEmpty();
      JsonNode g = p.path("gridPos");
      int x = g.path("x").asInt(-1);
      int y = g.path("y").asInt(-1);
      int w = g.path("w").asInt(0);
      int h = g.path("h").asInt(0);
      assertThat(x).as(p.path("title").asText()).isNotNegative();
      assertThat(w).isPositive();
      assertThat(h).isPositive();
      assertThat(x + w).as("panel %s fits in 24 columns", p.path("title").asText()).isLessThanOrEqualTo(24);
      for (int[] b : boxes) {
        boolean apart = x + w <= b[0] || b[0] + b[2] <= x || y + h <= b[1] || b[1] + b[3] <= y;
        assertThat(apart).as("panel %s overlaps another", p.path("title").asText()).isTrue();
      }
      boxes.add(new int[] {x, y, w, h});
      if (p.path("type").asText().equals("row")) {
        continue;
      }
      assertThat(p.path("datasource").path("uid").asText()).isEqualTo("${datasource}");
      assertThat(p.path("targets").size()).as(p.path("title").asText()).isPositive();
      for (JsonNode t : p.path("targets")) {
        assertThat(t.path("refId").asText()).isNotEmpty();
        String expr = t.path("expr").asText();
        assertThat(expr).isNotEmpty();
        Matcher m = Pattern.compile("\\$\\{?(\\w+)").matcher(expr);
        while (m.find()) {
          assertThat(variables).as("variable in " + expr).contains(m.group(1));
        }
        exprs.add(expr);
      }
    }
    assertThat(String.join("\n", exprs)).contains("fcap_decisions_total", "fcap_rule_decisions_total",
        "fcap_decision_seconds_bucket", "fcap_store_up");

    // every expression parses: promtool checks them as recording rules, with the variables filled in
    StringBuilder yaml = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
    for (int i = 0; i < exprs.size(); i++) {
      String e = exprs.get(i).replace("$__rate_interval", "5m").replace("$__interval", "1m")
          .replace("$job", ".*").replace("$tenant", ".*");
      yaml.append("      - record: dashboard:expr").append(i).append("\n        expr: ")
          .append(TestServer.JSON.writeValueAsString(e)).append('\n');
    }
    Path tmp = Files.createTempFile("fcap-dashboard-exprs", ".yml");
    try {
      Files.writeString(tmp, yaml);
      Run r = promtool(null, "check", "rules", tmp.toString());
      assertThat(r.exit()).as(r.output()).isZero();
    } finally {
      Files.deleteIfExists(tmp);
    }
    assertThat(exported()).containsAll(metricsNamedIn(String.join("\n", exprs)));
  }

  /** The sample names of both scrapes ({@code fcap_decision_seconds_bucket}, {@code fcap_decisions_total}). */
  private static Set<String> exported() {
    Set<String> names = new TreeSet<>();
    for (String scrape : List.of(healthy, degraded)) {
      scrape.lines().filter(l -> l.startsWith("fcap_")).forEach(l -> names.add(l.split("[{ ]", 2)[0]));
    }
    return names;
  }

  private static Set<String> metricsNamedIn(String text) {
    Set<String> names = new TreeSet<>();
    Matcher m = METRIC.matcher(text);
    while (m.find()) {
      names.add(m.group());
    }
    assertThat(names).isNotEmpty();
    return names;
  }

  /** The value of the sample whose name and labels are exactly {@code series}. */
  private static double sample(String scrape, String series) {
    return scrape.lines().filter(l -> l.startsWith(series + " ")).findFirst()
        .map(l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
        .orElseThrow(() -> new AssertionError("no sample " + series + " in:\n" + scrape));
  }

  record Run(int exit, String output) {}

  /** Runs promtool (Debian package {@code prometheus}) with {@code stdin} as its input. */
  private static Run promtool(String stdin, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add("promtool");
    cmd.addAll(List.of(args));
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new AssertionError("promtool is not installed: install Debian's prometheus package "
          + "(apt-get install prometheus; scripts/test does it when run as root)", e);
    }
    try (var in = p.getOutputStream()) {
      if (stdin != null) {
        in.write(stdin.getBytes(StandardCharsets.UTF_8));
      }
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
    return new Run(p.exitValue(), out.trim());
  }
}
