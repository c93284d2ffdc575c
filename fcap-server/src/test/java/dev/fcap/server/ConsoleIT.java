package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;

/**
 * The console (GET /) in headless Chromium against a real server on a loopback port: everything the
 * page shows comes from the server's public API, and every change the page makes is checked through
 * that API too. Each test works in its own tenant so the tests do not see each other's rules.
 */
class ConsoleIT {
  private static final String RULES = """
      policies:
        - tenant: shop-add
          rules:
            - {id: per-day, limit: 50, window: 24h, key: [recipient]}
        - tenant: shop-edit
          rules:
            - {id: per-minute, limit: 15, window: 1m, key: [recipient]}
        - tenant: shop-inspect
          rules:
            - {id: per-minute, limit: 3, window: 1m, key: [recipient]}
            - {id: same-content, limit: 1, window: 1h, key: [recipient, content]}
        - tenant: shop-live
          rules:
            - {id: per-minute, limit: 2, window: 1m, key: [recipient]}
        - tenant: shop-window
          rules:
            - {id: per-minute, limit: 5, window: 1m, key: [recipient]}
        - tenant: shop-wedit
          rules:
            - {id: per-minute, limit: 5, window: 1m, key: [recipient]}
      """;
  /** How the console writes an instant in a zone, whatever the browser's locale. */
  private static final DateTimeFormatter LOCAL = DateTimeFormatter.ofPattern("EEE yyyy-MM-dd HH:mm:ss", Locale.US);
  static final String ADMIN = "console-admin-secret";
  static final String READER = "console-reader-secret";
  static TestServer server;
  static Browser browser;

  @BeforeAll
  static void start() {
    String keys = "[{name: ops, sha256: " + AuthIT.hash(ADMIN) + ", tenants: ['*'], roles: [decide, read, admin]},"
        + " {name: viewer, sha256: " + AuthIT.hash(READER) + ", tenants: [shop-edit], roles: [read]}]";
    server = TestServer.start(RULES, Map.of("apiKeys", keys, "audit.sampleAdmissions", "0"));
    server.as(ADMIN);
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
  }

  /** Opens the console at {@code hash} and connects with {@code key} to {@code tenant}. */
  static void connect(String hash, String tenant, String key) {
    browser.open(server.base() + "/" + hash);
    browser.type("tenant", tenant);
    browser.type("api-key", key);
    browser.id("connect-button").click();
    if (key.equals(ADMIN)) {
      browser.waitText("#connection", "Connected");
      browser.waitText("#connection", "tenant " + tenant);
    }
  }

  @Test
  void theConsoleIsServedFromTheJarWithoutAKey() {
    TestServer.Reply page = server.as(null).get("/");
    server.as(ADMIN);
    assertThat(page.status()).isEqualTo(200);
    assertThat(page.raw().headers().firstValue("content-type").orElse("")).startsWith("text/html");
    assertThat(page.raw().headers().firstValue("content-security-policy").orElse("")).contains("script-src 'self'");
    assertThat(page.raw().body()).contains("fcap console");
    TestServer.Reply chart = server.get("/console/vendor/chart.umd.min.js");
    assertThat(chart.status()).isEqualTo(200);
    assertThat(chart.raw().body()).contains("Chart");
    // the API next to it still wants the key
    assertThat(server.as(null).get("/v1/rules").status()).isEqualTo(401);
    server.as(ADMIN);
  }

  @Test
  void anAddedRuleTakesEffectOnTheNextDecision() {
    connect("#rules", "shop-add", ADMIN);
    browser.waitVisible("tr[data-rule='per-day']");
    assertThat(browser.id("policy-version").getText()).isEqualTo("1");

    browser.id("add-rule").click();
    browser.waitVisible("#rule-dialog");
    browser.type("rule-id", "two-per-hour");
    browser.type("rule-description", "added from the console");
    browser.type("rule-limit", "2");
    browser.type("rule-window", "1h");
    browser.type("rule-key", "recipient");
    browser.id("rule-save").click();
    browser.waitText("#rules-message", "Rule two-per-hour added");
    browser.waitVisible("tr[data-rule='two-per-hour']");
    assertThat(browser.id("policy-version").getText()).isEqualTo("2");
    assertThat(browser.find("tr[data-rule='two-per-hour'] td.limit").getText()).isEqualTo("2 per 1h");
    browser.waitText("#history-table", "add two-per-hour");
    // the server has it
    assertThat(server.get("/v1/rules/two-per-hour?tenant=shop-add").body().get("limit").asLong()).isEqualTo(2);

    // a dry run (the default) counts nothing
    browser.open(server.base() + "/#try");
    browser.waitText("#connection", "Connected");
    browser.type("try-recipient", "bob");
    assertThat(browser.id("try-dryrun").isSelected()).isTrue();
    browser.id("try-send").click();
    browser.waitText("#try-verdict", "Allowed (dry run");
    assertThat(server.get("/v1/recipients/bob?tenant=shop-add").body().get("counters")).isEmpty();

    // real decisions: the third is denied by the new rule
    browser.id("try-dryrun").click();
    for (int i = 0; i < 2; i++) {
      browser.id("try-send").click();
      // a decision reports each rule's use before the message
      browser.waitText("#try-json", "\"used\": " + i);
      assertThat(browser.id("try-verdict").getText()).isEqualTo("Allowed");
    }
    browser.id("try-send").click();
    browser.waitText("#try-verdict", "Denied");
    assertThat(browser.id("try-summary").getText()).contains("blocked by two-per-hour");
    assertThat(browser.find("#try-rules tr[data-rule='two-per-hour']").getText()).contains("blocks");
    assertThat(browser.id("try-json").getText()).contains("\"allowed\": false").contains("\"policyVersion\": 2");

    // switched to shadow, the rule reports but no longer denies
    browser.open(server.base() + "/#rules");
    browser.waitVisible("tr[data-rule='two-per-hour']");
    browser.click("tr[data-rule='two-per-hour'] .mode-toggle");
    browser.waitText("#rules-message", "two-per-hour is now in shadow mode");
    browser.waitText("tr[data-rule='two-per-hour'] .badge", "shadow");
    assertThat(server.get("/v1/rules/two-per-hour?tenant=shop-add").body().get("mode").asText()).isEqualTo("shadow");
    TestServer.Reply d = server.decide("{\"tenant\": \"shop-add\", \"recipient\": \"bob\"}");
    assertThat(d.body().get("allowed").asBoolean()).isTrue();
    assertThat(d.body().get("shadowBlockedBy").get(0).asText()).isEqualTo("two-per-hour");
  }

  @Test
  void theRulesViewWorksFromTheKeyboard() {
    connect("#rules", "shop-edit", ADMIN);
    browser.waitVisible("tr[data-rule='per-minute']");
    // Enter on the focused button opens the editor with the focus in its first field, Tab moves on
    browser.id("add-rule").sendKeys(Keys.ENTER);
    browser.waitVisible("#rule-dialog");
    assertThat(activeId()).isEqualTo("rule-id");
    browser.driver.switchTo().activeElement().sendKeys("kb-rule", Keys.TAB);
    assertThat(activeId()).isEqualTo("rule-description");
    // Escape closes it without saving
    browser.driver.switchTo().activeElement().sendKeys(Keys.ESCAPE);
    browser.waitGone("#rule-dialog");
    // the delete confirmation starts on Cancel, and Escape cancels
    browser.find("tr[data-rule='per-minute'] button[aria-label='Delete per-minute']").sendKeys(Keys.ENTER);
    browser.waitVisible("#confirm-dialog");
    assertThat(activeId()).isEqualTo("confirm-cancel");
    browser.driver.switchTo().activeElement().sendKeys(Keys.ESCAPE);
    browser.waitGone("#confirm-dialog");
    TestServer.Reply policy = server.get("/v1/rules?tenant=shop-edit");
    assertThat(policy.body().get("version").asLong()).isEqualTo(1);
    assertThat(policy.body().get("rules")).hasSize(1);
    // the views are links: reachable with Tab, followed with Enter
    browser.id("tab-inspect").sendKeys(Keys.ENTER);
    browser.waitVisible("#inspect-form");
    assertThat(browser.id("tab-inspect").getAttribute("aria-current")).isEqualTo("page");
  }

  private static String activeId() {
    return browser.driver.switchTo().activeElement().getAttribute("id");
  }

  @Test
  void tryItShowsBadInputNextToTheField() {
    connect("#try", "shop-edit", ADMIN);
    browser.type("try-recipient", "erin");
    browser.type("try-cost", "-1");
    browser.id("try-send").click();
    assertThat(browser.waitText("#try-cost-error", "cost must be")).contains("-1");
    assertThat(browser.id("try-cost").getAttribute("aria-invalid")).isEqualTo("true");
    assertThat(browser.id("try-result").isDisplayed()).isFalse();
    browser.type("try-cost", "");
    browser.type("try-recipient", "");
    browser.id("try-send").click();
    assertThat(browser.waitText("#try-recipient-error", "recipient is required")).isNotEmpty();
    assertThat(browser.id("try-cost-error").getText()).isEmpty();
  }

  @Test
  void anInvalidEditShowsTheServersErrorsNextToTheFieldsAndChangesNothing() {
    connect("#rules", "shop-edit", ADMIN);
    browser.waitVisible("tr[data-rule='per-minute']");
    browser.click("tr[data-rule='per-minute'] button[aria-label='Edit per-minute']");
    browser.waitVisible("#rule-dialog");
    assertThat(browser.id("rule-id").getAttribute("readonly")).isNotNull();
    assertThat(browser.id("rule-limit").getAttribute("value")).isEqualTo("15");
    browser.type("rule-limit", "0");
    browser.type("rule-window", "5 parsecs");
    browser.id("rule-save").click();

    assertThat(browser.waitText("#rule-window-error", "does not parse")).contains("5 parsecs");
    assertThat(browser.waitText("#rule-limit-error", "limit must be")).contains("got 0");
    assertThat(browser.id("rule-window").getAttribute("aria-invalid")).isEqualTo("true");
    assertThat(browser.id("rule-limit").getAttribute("aria-invalid")).isEqualTo("true");
    assertThat(browser.id("rule-key-error").getText()).isEmpty();
    assertThat(browser.id("rule-dialog").isDisplayed()).isTrue();
    // nothing was applied
    TestServer.Reply policy = server.get("/v1/rules?tenant=shop-edit");
    assertThat(policy.body().get("version").asLong()).isEqualTo(1);
    assertThat(policy.body().get("rules").get(0).get("window").asText()).isEqualTo("1m");

    // fixing the fields clears the errors, and the validation passes
    browser.type("rule-limit", "20");
    browser.type("rule-window", "2m");
    browser.id("rule-validate").click();
    browser.waitText("#rule-form-message", "Valid");
    assertThat(browser.id("rule-window-error").getText()).isEmpty();
    browser.id("rule-cancel").click();
    browser.waitGone("#rule-dialog");
    assertThat(server.get("/v1/rules?tenant=shop-edit").body().get("version").asLong()).isEqualTo(1);

    // a new rule with an id that exists is refused next to the id
    browser.id("add-rule").click();
    browser.type("rule-id", "per-minute");
    browser.type("rule-limit", "1");
    browser.type("rule-window", "1h");
    browser.id("rule-save").click();
    assertThat(browser.waitText("#rule-id-error", "duplicate")).contains("rule id");
    browser.id("rule-cancel").click();
  }

  @Test
  void theInspectorShowsUsageAndDenialsAndResetsAfterConfirmation() {
    String m = "{\"tenant\": \"shop-inspect\", \"recipient\": \"carol\", \"content\": \"%s\"}";
    assertThat(server.decide(m.formatted("hello")).body().get("allowed").asBoolean()).isTrue();
    assertThat(server.decide(m.formatted("hello")).body().get("allowed").asBoolean()).isFalse();
    assertThat(server.decide(m.formatted("other")).body().get("allowed").asBoolean()).isTrue();

    connect("#inspect", "shop-inspect", ADMIN);
    browser.type("inspect-recipient", "carol");
    browser.id("inspect-recipient").submit();
    browser.waitVisible("#inspect-counters tr[data-rule='per-minute']");
    WebElement perMinute = browser.find("#inspect-counters tr[data-rule='per-minute']");
    assertThat(perMinute.findElement(org.openqa.selenium.By.cssSelector(".usage")).getText()).isEqualTo("2 / 3");
    assertThat(perMinute.findElement(org.openqa.selenium.By.cssSelector(".remaining")).getText()).isEqualTo("1");
    assertThat(perMinute.findElement(org.openqa.selenium.By.cssSelector(".frees")).getText()).isEqualTo("free now");
    List<WebElement> content = browser.findAll("#inspect-counters tr[data-rule='same-content']");
    assertThat(content).hasSize(2);
    assertThat(content.get(0).getText()).contains("1 / 1").contains("content ");
    assertThat(content.get(0).findElement(org.openqa.selenium.By.cssSelector(".frees")).getText()).startsWith("in ");
    assertThat(browser.waitText("#inspect-denials", "same-content")).contains("same-content");

    // cancelling the confirmation keeps everything
    browser.id("inspect-reset").click();
    browser.waitVisible("#confirm-dialog");
    assertThat(browser.id("confirm-text").getText()).contains("carol").contains("shop-inspect");
    browser.id("confirm-cancel").click();
    browser.waitGone("#confirm-dialog");
    assertThat(server.get("/v1/recipients/carol?tenant=shop-inspect").body().get("counters")).hasSize(3);

    browser.id("inspect-reset").click();
    browser.waitVisible("#confirm-dialog");
    browser.id("confirm-ok").click();
    browser.waitText("#inspect-message", "carol was reset");
    browser.waitVisible("#inspect-empty");
    assertThat(browser.findAll("#inspect-counters tbody tr")).isEmpty();
    assertThat(server.get("/v1/recipients/carol?tenant=shop-inspect").body().get("counters")).isEmpty();
  }

  @Test
  void theRuleEditorWritesASendWindowAndThePolicysZone() {
    connect("#rules", "shop-wedit", ADMIN);
    browser.waitVisible("tr[data-rule='per-minute']");
    browser.id("add-rule").click();
    browser.waitVisible("#rule-dialog");
    assertThat(browser.id("rule-sendWindow").isDisplayed()).isFalse();
    new Select(browser.id("rule-kind")).selectByValue("sendWindow");
    // a send window has no limit, window or key: the editor shows its own fields instead
    assertThat(browser.id("rule-limit").isDisplayed()).isFalse();
    assertThat(browser.id("rule-sendWindow").isDisplayed()).isTrue();
    assertThat(browser.id("rule-windowZone").getAttribute("value")).isEqualTo("recipient");
    browser.type("rule-id", "quiet-hours");
    browser.type("rule-sendWindow", "mon, tue, wed, thu, fri 08:00-21:00\nsat, sun 10:00-20:00");
    browser.type("rule-closed", "2026-12-25");
    browser.type("rule-match", "category: marketing");
    browser.id("rule-save").click();
    browser.waitText("#rules-message", "Rule quiet-hours added");
    browser.waitVisible("tr[data-rule='quiet-hours']");
    assertThat(browser.find("tr[data-rule='quiet-hours'] td.limit").getText())
        .isEqualTo("sends only mon, tue, wed, thu, fri 08:00-21:00; sat, sun 10:00-20:00; closed 2026-12-25");
    assertThat(browser.find("tr[data-rule='quiet-hours']").getText()).contains("send window (recipient's time)")
        .contains("match category \u2208 {marketing}");
    JsonNode window = server.get("/v1/rules/quiet-hours?tenant=shop-wedit").body();
    assertThat(window.get("sendWindow").get("allow").toString()).isEqualTo("[{\"days\":[\"mon\",\"tue\",\"wed\","
        + "\"thu\",\"fri\"],\"from\":\"08:00\",\"to\":\"21:00\"},{\"days\":[\"sat\",\"sun\"],\"from\":\"10:00\","
        + "\"to\":\"20:00\"}]");
    assertThat(window.get("sendWindow").get("closed").get(0).asText()).isEqualTo("2026-12-25");
    assertThat(window.get("match").get("category").get(0).asText()).isEqualTo("marketing");
    long version = server.get("/v1/rules?tenant=shop-wedit").body().get("version").asLong();

    // editing shows it as written; an interval that opens and closes at once is refused next to the field
    browser.click("tr[data-rule='quiet-hours'] button[aria-label='Edit quiet-hours']");
    browser.waitVisible("#rule-dialog");
    assertThat(browser.id("rule-sendWindow").getAttribute("value"))
        .isEqualTo("mon, tue, wed, thu, fri 08:00-21:00\nsat, sun 10:00-20:00");
    assertThat(browser.id("rule-closed").getAttribute("value")).isEqualTo("2026-12-25");
    assertThat(browser.id("rule-kind").isEnabled()).isFalse();
    browser.type("rule-sendWindow", "mon 09:00-09:00");
    browser.id("rule-save").click();
    assertThat(browser.waitText("#rule-sendWindow-error", "line 1: from and to are both 09:00")).isNotEmpty();
    assertThat(browser.id("rule-sendWindow").getAttribute("aria-invalid")).isEqualTo("true");
    browser.type("rule-sendWindow", "whenever");
    browser.id("rule-validate").click();
    browser.waitText("#rule-sendWindow-error", "one interval per line");
    browser.type("rule-sendWindow", "22:00-06:00");
    browser.type("rule-windowZone", "Europe/Lundun");
    browser.id("rule-validate").click();
    browser.waitText("#rule-windowZone-error", "Europe/Lundun");
    browser.id("rule-cancel").click();
    browser.waitGone("#rule-dialog");
    assertThat(server.get("/v1/rules?tenant=shop-wedit").body().get("version").asLong()).isEqualTo(version);

    // the policy's zone: an unknown one is refused next to the field, a known one is set
    browser.type("policy-timeZone", "Mars/Olympus");
    browser.id("policy-timeZone-save").click();
    browser.waitText("#policy-timeZone-error", "Mars/Olympus");
    assertThat(server.get("/v1/rules?tenant=shop-wedit").body().has("timeZone")).isFalse();
    browser.type("policy-timeZone", "Asia/Tokyo");
    browser.id("policy-timeZone-save").click();
    browser.waitText("#rules-message", "time zone is now Asia/Tokyo");
    browser.waitText("#policy-zone-shown", "Asia/Tokyo");
    JsonNode policy = server.get("/v1/rules?tenant=shop-wedit").body();
    assertThat(policy.get("timeZone").asText()).isEqualTo("Asia/Tokyo");
    assertThat(policy.get("rules")).hasSize(2);
    assertThat(policy.get("rules").get(1).get("sendWindow").get("closed").get(0).asText()).isEqualTo("2026-12-25");
  }

  @Test
  void theInspectorAndTryItShowSendWindowsInTheRecipientsTime() {
    // a window of three hours around now in Tokyo: open there, shut in New York (13 or 14 hours behind)
    Instant now = Instant.now();
    LocalTime tokyo = now.atZone(ZoneId.of("Asia/Tokyo")).toLocalTime().truncatedTo(ChronoUnit.MINUTES);
    LocalTime from = tokyo.minusHours(1);
    String policy = "{\"rules\": [{\"id\": \"local-hours\", \"match\": {\"category\": [\"marketing\"]}, "
        + "\"sendWindow\": {\"allow\": [{\"from\": \"" + from + "\", \"to\": \"" + tokyo.plusHours(2) + "\"}]}}]}";
    assertThat(server.put("/v1/rules?tenant=shop-window", policy, Map.of()).status()).isEqualTo(200);
    ZoneId newYork = ZoneId.of("America/New_York");
    ZonedDateTime opens = now.atZone(newYork).with(from);
    if (!opens.toInstant().isAfter(now)) {
      opens = opens.plusDays(1).with(from);
    }
    String local = LOCAL.format(opens) + " America/New_York";
    String utc = LOCAL.format(opens.withZoneSameInstant(ZoneOffset.UTC)) + " UTC";

    connect("#inspect", "shop-window", ADMIN);
    browser.type("inspect-recipient", "dana");
    browser.type("inspect-timeZone", "Asia/Tokyo");
    browser.id("inspect-recipient").submit();
    browser.waitVisible("#inspect-windows tr[data-rule='local-hours']");
    WebElement row = browser.find("#inspect-windows tr[data-rule='local-hours']");
    assertThat(row.findElement(org.openqa.selenium.By.cssSelector(".state")).getText()).isEqualTo("open");
    assertThat(row.findElement(org.openqa.selenium.By.cssSelector(".zone")).getText()).isEqualTo("Asia/Tokyo");
    assertThat(row.getText()).contains("match category \u2208 {marketing}");
    assertThat(browser.id("inspect-windows-meta").getText()).contains("Asia/Tokyo");

    browser.type("inspect-timeZone", "America/New_York");
    browser.id("inspect-recipient").submit();
    browser.waitText("#inspect-windows tr[data-rule='local-hours'] .state", "shut");
    String opening = browser.find("#inspect-windows tr[data-rule='local-hours'] .opens").getText();
    assertThat(opening).contains(local).contains(utc);
    browser.type("inspect-timeZone", "Mars/Olympus");
    browser.id("inspect-recipient").submit();
    assertThat(browser.waitText("#inspect-timeZone-error", "unknown time zone")).contains("Mars/Olympus");

    // Try it: refused in New York's night, with the time it may go in New York and in UTC
    browser.open(server.base() + "/#try");
    browser.waitText("#connection", "Connected");
    browser.type("try-recipient", "dana");
    browser.type("try-category", "marketing");
    browser.type("try-timeZone", "America/New_York");
    browser.id("try-send").click();
    browser.waitText("#try-verdict", "Denied");
    assertThat(browser.id("try-summary").getText()).contains("blocked by local-hours");
    assertThat(browser.id("try-sendat").getText()).contains(local + " (recipient's time)").contains(utc);
    // in Tokyo it may go now
    browser.type("try-timeZone", "Asia/Tokyo");
    browser.id("try-send").click();
    browser.waitText("#try-verdict", "Allowed");
    assertThat(browser.id("try-sendat").isDisplayed()).isFalse();
    browser.type("try-timeZone", "Mars/Olympus");
    browser.id("try-send").click();
    assertThat(browser.waitText("#try-timeZone-error", "unknown time zone")).contains("Mars/Olympus");
  }

  @Test
  void theRuleEditorWritesHeadroomAndTryItDecidesByPriority() {
    String policy = "{\"rules\": [{\"id\": \"per-minute\", \"limit\": 5, \"window\": \"1m\", \"key\": [\"recipient\"]}]}";
    assertThat(server.put("/v1/rules?tenant=shop-prio", policy, Map.of()).status()).isEqualTo(200);
    connect("#rules", "shop-prio", ADMIN);
    browser.waitVisible("tr[data-rule='per-minute']");
    browser.id("add-rule").click();
    browser.waitVisible("#rule-dialog");
    browser.type("rule-id", "per-day");
    browser.type("rule-limit", "3");
    browser.type("rule-window", "1d");
    browser.type("rule-key", "recipient");
    browser.type("rule-headroom", "low=9");
    browser.id("rule-save").click();
    assertThat(browser.waitText("#rule-headroom-error", "from 0 to the limit (3)")).contains("got 9");
    browser.type("rule-headroom", "low 2");
    browser.id("rule-validate").click();
    browser.waitText("#rule-headroom-error", "write priority=units");
    browser.type("rule-headroom", "low=2");
    browser.type("rule-countOnly", "category: transactional");
    browser.id("rule-save").click();
    browser.waitText("#rules-message", "Rule per-day added");
    // the message comes before the table is drawn again: wait for the row
    assertThat(browser.waitText("tr[data-rule='per-day'] td.limit", "per 24h")).isEqualTo("3 per 24h (headroom low=2)");
    JsonNode perDay = server.get("/v1/rules/per-day?tenant=shop-prio").body();
    assertThat(perDay.get("headroom").get("low").asLong()).isEqualTo(2);
    assertThat(perDay.get("countOnly").get("category").get(0).asText()).isEqualTo("transactional");
    assertThat(browser.find("tr[data-rule='per-day']").getText()).contains("count only category \u2208 {transactional}");

    // a low message may bring the day to 1 of 3: the second is refused, a high one still goes
    browser.open(server.base() + "/#try");
    browser.waitText("#connection", "Connected");
    browser.type("try-recipient", "erin");
    if (browser.id("try-dryrun").isSelected()) {
      browser.id("try-dryrun").click(); // count it (the page may keep the box from an earlier visit)
    }
    assertThat(browser.id("try-dryrun").isSelected()).isFalse();
    new Select(browser.id("try-priority")).selectByValue("low");
    browser.id("try-send").click();
    browser.waitText("#try-verdict", "Allowed");
    assertThat(browser.find("#try-rules tr[data-rule='per-day']").getText()).contains("this priority: up to 1");
    browser.id("try-send").click();
    browser.waitText("#try-verdict", "Denied");
    assertThat(browser.id("try-summary").getText()).contains("blocked by per-day");
    new Select(browser.id("try-priority")).selectByValue("high");
    browser.id("try-send").click();
    browser.waitText("#try-verdict", "Allowed");
    assertThat(browser.find("#try-rules tr[data-rule='per-day']").getText()).doesNotContain("this priority");
  }

  @Test
  void aWrongOrMissingKeyGetsAClearMessage() {
    connect("#rules", "shop-edit", "not-a-key");
    assertThat(browser.waitText("#alert-text", "401")).contains("refused this API key").contains("unknown API key");
    assertThat(browser.id("connection").getText()).isEqualTo("API key refused");
    // nothing of what the page showed before stays on screen
    assertThat(browser.id("main").isDisplayed()).isFalse();

    connect("#rules", "shop-edit", "");
    assertThat(browser.waitText("#alert-text", "401")).contains("needs an API key");

    // a read-only key sees the rules but may not change them
    connect("#rules", "shop-edit", READER);
    browser.waitText("#connection", "Connected");
    browser.waitVisible("tr[data-rule='per-minute']");
    assertThat(browser.id("alert").isDisplayed()).isFalse();
    browser.click("tr[data-rule='per-minute'] .mode-toggle");
    assertThat(browser.waitText("#alert-text", "403")).contains("may not do that");
    assertThat(browser.waitText("#rules-message", "Cannot switch")).contains("admin");
    assertThat(server.get("/v1/rules?tenant=shop-edit").body().get("version").asLong()).isEqualTo(1);
    // and a tenant it does not have is refused too
    connect("#rules", "shop-add", READER);
    assertThat(browser.waitText("#alert-text", "403")).contains("shop-add");
  }

  @Test
  void theLiveViewShowsTheServersCounters() {
    connect("?poll=250#live", "shop-live", ADMIN);
    browser.waitVisible("#live-empty");
    for (int i = 0; i < 5; i++) {
      server.decide("{\"tenant\": \"shop-live\", \"recipient\": \"dave\"}");
    }
    // 2 allowed, 3 denied by per-minute: as counted by the server's metrics
    browser.waitText("#live-rules tr[data-rule='per-minute'] .blocked-total", "3");
    browser.waitText("#tile-total", "5");
    assertThat(browser.id("live-empty").isDisplayed()).isFalse();
    assertThat(browser.script("return typeof Chart")).isEqualTo("function");
    browser.waitUntil("the rates chart has points", () -> ((Number) browser.script(
        "return Chart.getChart('chart-rates').data.labels.length")).intValue() > 0);
    browser.waitUntil("the per-rule chart has the rule", () -> browser.script(
        "return Chart.getChart('chart-rules').data.datasets.map(d => d.label).join(',')").equals("per-minute"));
  }

  @Test
  void theMetricsParserReadsThePrometheusText() {
    connect("#live", "shop-live", ADMIN);
    String text = """
        # HELP x_total a counter
        x_total{a="1",b="say \\"hi\\"\\n"} 2.0
        x_total{a="2"} 3
        h_seconds_bucket{le="0.001"} 1
        h_seconds_bucket{le="0.002"} 3
        h_seconds_bucket{le="+Inf"} 4
        garbage line
        """;
    @SuppressWarnings("unchecked")
    Map<String, Object> r = (Map<String, Object>) browser.driver.executeAsyncScript("""
        const done = arguments[arguments.length - 1];
        import('/console/js/prom.js').then((p) => {
          const s = p.parseMetrics(arguments[0]);
          done({count: s.length, label: s[0].labels.b, sum: p.sum(s, 'x_total'), one: p.sum(s, 'x_total', {a: '2'}),
            p50: p.quantile(0.5, null, p.buckets(s, 'h_seconds'))});
        });
        """, text);
    assertThat(((Number) r.get("count")).intValue()).isEqualTo(5);
    assertThat(r.get("label")).isEqualTo("say \"hi\"\n");
    assertThat(((Number) r.get("sum")).doubleValue()).isEqualTo(5.0);
    assertThat(((Number) r.get("one")).doubleValue()).isEqualTo(3.0);
    // rank 2 of 4 falls in the (0.001, 0.002] bucket, half way through its 2 observations
    assertThat(((Number) r.get("p50")).doubleValue()).isCloseTo(0.0015, org.assertj.core.data.Offset.offset(1e-9));
  }

  @Test
  void aServerThatIsDownGetsAClearMessage() {
    // a server without API keys: the console works without a key, on loopback
    TestServer open = TestServer.start(null, Map.of());
    String base = open.base();
    boolean closed = false;
    try {
      browser.open(open.base() + "/#rules");
      browser.type("api-key", "");
      browser.id("connect-button").click();
      browser.waitText("#connection", "no API key (loopback)");
      browser.waitVisible("tr[data-rule='recipient-per-minute']");
      open.close();
      closed = true;
      browser.id("reload-rules").click();
      assertThat(browser.waitText("#alert-text", "Cannot reach the fcap server")).contains(base);
      assertThat(browser.id("connection").getText()).isEqualTo("Server unreachable");
    } finally {
      if (!closed) {
        open.close();
      }
    }
  }
}
