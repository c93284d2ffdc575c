package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Screenshots of every console view, light and dark, laptop and phone width, with real traffic
 * behind them. They go to {@code target/console-screenshots/}; to refresh the ones in the docs:
 *
 * <pre>
 * ./mvnw -B -pl fcap-server -am verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=ConsoleScreenshotsIT -Dfailsafe.failIfNoSpecifiedTests=false \
 *     -Dconsole.screenshots=$PWD/docs/console
 * </pre>
 *
 * <p>It makes pictures for the docs and checks nothing the browser tests ({@code ConsoleIT}) do not,
 * so it runs only when {@code console.screenshots} is set, never in {@code scripts/test}.
 */
@EnabledIfSystemProperty(named = "console.screenshots", matches = ".+")
class ConsoleScreenshotsIT {
  /** The seed policy, as the server ships it. */
  private static final Path SEED = Path.of("../examples/rules.yaml");
  private static final String MARKETING = """
      {"id": "marketing-sms-per-day", "description": "trial: 3 marketing SMS a calendar day",
       "limit": 3, "window": "1d", "key": ["recipient"], "algorithm": "fixed-window", "zone": "Asia/Shanghai",
       "match": {"channel": ["sms"], "category": ["marketing"]}, "exempt": {"attr:vip": ["yes"]}, "mode": "shadow"}
      """;
  static TestServer server;
  static Browser browser;
  static Path out;
  static final List<Path> shots = new ArrayList<>();
  /** An import for the suppression view: three rows, one of them bad. */
  static Path stopList;

  @BeforeAll
  static void start() throws IOException {
    out = Path.of(System.getProperty("console.screenshots", "target/console-screenshots"));
    Files.createDirectories(out);
    server = TestServer.start(Files.readString(SEED), Map.of("audit.sampleAdmissions", "0"));
    // a little history: an added rule, then an edit
    assertThat(server.post("/v1/rules", MARKETING).status()).isEqualTo(201);
    assertThat(server.put("/v1/rules/recipient-per-day", "{\"limit\": 40, \"window\": \"24h\", \"key\": [\"recipient\"],"
        + " \"description\": \"at most 40 messages to one recipient in any 24 hours\"}", Map.of()).status())
        .isEqualTo(200);
    // a suppression list: a few entries, and a file to import
    long in90Days = System.currentTimeMillis() + 90L * 86_400_000;
    Map<String, String> entries = Map.of(
        "%2B8613800000007", "{\"channels\": [\"sms\"], \"reason\": \"replied TD\"}",
        "%2B8613800000011", "{\"categories\": [\"marketing\"], \"reason\": \"complaint\", \"expiresAt\": "
            + in90Days + "}",
        "%2B8613800000019", "{\"reason\": \"legal block list\"}");
    for (Map.Entry<String, String> e : entries.entrySet()) {
      assertThat(server.put("/v1/suppressions/" + e.getKey(), e.getValue(), Map.of()).status()).isEqualTo(200);
    }
    stopList = Files.createTempDirectory("fcap-screenshots").resolve("stop-list.csv");
    Files.writeString(stopList, "recipient,channels,reason\n+8613800000021,sms,replied STOP\n"
        + "+8613800000022,sms|push,\"complaint, by phone\"\n,sms,no recipient\n");
    browser = Browser.start();
  }

  @AfterAll
  static void stop() {
    if (browser != null) {
      browser.close();
    }
    if (server != null) {
      server.close();
    }
    if (stopList != null) {
      stopList.toFile().delete();
      stopList.getParent().toFile().delete();
    }
  }

  /** A burst of traffic: a few busy recipients and repeated contents, so some rules deny. */
  static void traffic(int round) {
    for (int i = 0; i < 8 + (round % 4) * 4; i++) {
      int who = (i * 7 + round * 5) % 40;
      String recipient = "+86138000000" + String.format("%02d", who);
      String content = "promo " + ((i + round) % 6);
      String category = i % 2 == 0 ? "marketing" : "notification";
      server.decide("{\"recipient\": \"" + recipient + "\", \"content\": \"" + content + "\", \"channel\": \"sms\","
          + " \"category\": \"" + category + "\"}");
    }
  }

  static void shot(String name) {
    browser.script("window.scrollTo(0, 0)");
    shots.add(browser.screenshot(out.resolve(name + ".png")));
  }

  @Test
  void everyViewLightAndDark() throws InterruptedException {
    browser.size(1280, 860);
    browser.colorScheme("light");
    browser.open(server.base() + "/?poll=1000#live");
    browser.waitText("#connection", "Connected");
    // about a dozen seconds of traffic while the live view polls: real rates in the charts
    for (int round = 0; round < 12; round++) {
      traffic(round);
      Thread.sleep(1000);
    }
    // the recipient the inspector shows: a few sends, some of the same content (denied)
    for (String content : List.of("promo 1", "promo 1", "promo 1", "welcome", "promo 2")) {
      server.decide("{\"recipient\": \"+8613800000003\", \"content\": \"" + content + "\", \"channel\": \"sms\","
          + " \"category\": \"marketing\"}");
    }
    browser.waitVisible("#live-rules tr[data-rule='same-content-per-59s']");
    browser.waitUntil("the charts have points", () -> ((Number) browser.script(
        "return Chart.getChart('chart-rates').data.labels.length")).intValue() >= 8);
    shot("live");
    // the charts follow a change of scheme in place, keeping their history
    browser.colorScheme("dark");
    for (int round = 12; round < 15; round++) {
      traffic(round);
      Thread.sleep(1000);
    }
    shot("live-dark");

    for (String scheme : List.of("light", "dark")) {
      browser.colorScheme(scheme);
      String suffix = scheme.equals("light") ? "" : "-dark";

      browser.open(server.base() + "/#rules");
      browser.waitVisible("tr[data-rule='marketing-sms-per-day']");
      browser.waitText("#history-table", "update recipient-per-day");
      shot("rules" + suffix);

      browser.open(server.base() + "/#inspect");
      browser.waitText("#connection", "Connected");
      browser.type("inspect-recipient", "+8613800000003");
      browser.id("inspect-recipient").submit();
      browser.waitVisible("#inspect-counters tr[data-rule='recipient-per-minute']");
      shot("inspector" + suffix);

      browser.open(server.base() + "/#try");
      browser.waitText("#connection", "Connected");
      browser.type("try-recipient", "+8613800000003");
      browser.type("try-channel", "sms");
      browser.type("try-category", "marketing");
      browser.type("try-content", "promo 1");
      browser.id("try-send").click();
      browser.waitVisible("#try-verdict");
      shot("try-it" + suffix);

      browser.size(1280, 1400); // tall enough for the list under the forms
      browser.open(server.base() + "/#suppressions");
      browser.waitText("#connection", "Connected");
      browser.type("sup-find-recipient", "+8613800000007");
      browser.id("sup-find").click();
      browser.waitText("#sup-entry-reason", "replied TD");
      browser.id("sup-file").sendKeys(stopList.toString());
      browser.id("sup-import").click();
      browser.waitText("#sup-import-result", "2 applied, 1 rejected");
      browser.waitVisible("#sup-list tr[data-recipient='+8613800000022']");
      shot("suppressions" + suffix);
      browser.size(1280, 860);
    }

    browser.colorScheme("light");
    browser.open(server.base() + "/#rules");
    browser.waitVisible("tr[data-rule='recipient-per-minute']");
    browser.click("tr[data-rule='recipient-per-minute'] button[aria-label='Edit recipient-per-minute']");
    browser.type("rule-window", "1 fortnight");
    browser.type("rule-limit", "-3");
    browser.id("rule-save").click();
    browser.waitText("#rule-window-error", "does not parse");
    shot("rules-edit-error");
    browser.id("rule-cancel").click();

    browser.size(390, 844);
    browser.open(server.base() + "/#rules");
    browser.waitVisible("tr[data-rule='recipient-per-minute']");
    shot("rules-narrow");
    browser.open(server.base() + "/?poll=500#live");
    browser.waitText("#connection", "Connected");
    for (int round = 15; round < 18; round++) {
      traffic(round);
      Thread.sleep(600);
    }
    browser.waitUntil("the tiles have rates", () -> !browser.id("tile-decisions").getText().equals("-"));
    shot("live-narrow");

    for (Path p : shots) {
      try {
        byte[] png = Files.readAllBytes(p);
        assertThat(png.length).as(p.toString()).isGreaterThan(10_000);
        assertThat(new String(png, 1, 3, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("PNG");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    assertThat(shots).hasSize(13);
  }
}
