package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.WebElement;

/**
 * The console's suppression view in headless Chromium against a real server on a loopback port:
 * every entry the page adds, removes or imports is checked through the API, and the decisions it
 * changes through {@code POST /v1/decisions}. Each test works in its own tenant.
 */
class ConsoleSuppressionsIT {
  private static final String RULES = """
      policies:
        - tenant: sup-edit
          rules:
            - {id: per-day, limit: 50, window: 24h, key: [recipient]}
        - tenant: sup-import
          rules:
            - {id: per-day, limit: 50, window: 24h, key: [recipient]}
        - tenant: sup-big
          rules:
            - {id: per-day, limit: 50, window: 24h, key: [recipient]}
        - tenant: sup-list
          rules:
            - {id: per-day, limit: 50, window: 24h, key: [recipient]}
      """;
  static final String ADMIN = "sup-admin-secret";
  /** May read rules and use the suppression lists, nothing else: what a support desk holds. */
  static final String SUPPORT = "sup-support-secret";
  static final String READER = "sup-reader-secret";
  static TestServer server;
  static Browser browser;

  @BeforeAll
  static void start() {
    String keys = "[{name: ops, sha256: " + AuthIT.hash(ADMIN) + ", tenants: ['*'], roles: [decide, read, admin]},"
        + " {name: support, sha256: " + AuthIT.hash(SUPPORT) + ", tenants: ['*'], roles: [read, suppress]},"
        + " {name: viewer, sha256: " + AuthIT.hash(READER) + ", tenants: [sup-edit], roles: [read]}]";
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

  /**
   * Opens a fresh console at {@code hash} (after an optional query) and connects with {@code key} to
   * {@code tenant}. A fresh page: opening the address the browser shows already only moves to its
   * fragment, keeping what an earlier test left in the forms.
   */
  static void connect(String hash, String tenant, String key) {
    browser.open("about:blank");
    browser.open(server.base() + "/" + hash);
    browser.type("tenant", tenant);
    browser.type("api-key", key);
    browser.id("connect-button").click();
    browser.waitText("#connection", "Connected");
    browser.waitText("#connection", "tenant " + tenant);
  }

  private static JsonNode entry(String tenant, String recipient) {
    TestServer.Reply r = server.get("/v1/suppressions/" + encode(recipient) + "?tenant=" + tenant);
    return r.status() == 404 ? null : r.body();
  }

  private static String encode(String s) {
    return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
  }

  private static String blockedBy(String tenant, String recipient, String channel) {
    return server.decide("{\"tenant\": \"" + tenant + "\", \"recipient\": \"" + recipient + "\", \"channel\": \""
        + channel + "\", \"dryRun\": true}").body().get("blockedBy").toString();
  }

  @Test
  void theViewIsServedFromTheJar() {
    TestServer.Reply page = server.as(null).get("/");
    TestServer.Reply script = server.get("/console/js/suppressions.js");
    TestServer.Reply api = server.get("/console/js/api.js");
    server.as(ADMIN);
    assertThat(page.raw().body()).contains("id=\"view-suppressions\"").contains("href=\"#suppressions\"");
    assertThat(script.status()).isEqualTo(200);
    assertThat(script.raw().headers().firstValue("content-type").orElse("")).contains("javascript");
    assertThat(script.raw().headers().firstValue("content-security-policy").orElse("")).contains("script-src 'self'");
    // no markup is built from text: every value goes in as a text node
    assertThat(script.raw().body()).doesNotContain("innerHTML").doesNotContain("insertAdjacentHTML");
    assertThat(api.raw().body()).contains("'/v1/suppressions/import'").contains("xhr.upload.onprogress");
  }

  @Test
  void anEntryIsAddedFoundAndRemovedAfterConfirmation() {
    connect("#suppressions", "sup-edit", SUPPORT);
    browser.waitVisible("#sup-list-empty");
    browser.type("sup-find-recipient", "+15550001");
    browser.id("sup-find").click();
    browser.waitText("#sup-none", "+15550001 is not suppressed in tenant sup-edit");
    assertThat(blockedBy("sup-edit", "+15550001", "sms")).isEqualTo("[]");

    long before = System.currentTimeMillis();
    browser.type("sup-recipient", "+15550001");
    browser.type("sup-channels", "sms, push");
    browser.type("sup-reason", "replied STOP <b>now</b>");
    browser.type("sup-expiresAt", "30d");
    browser.id("sup-save").click();
    browser.waitText("#sup-message", "+15550001 is suppressed (sms, push; every category)");
    JsonNode saved = entry("sup-edit", "+15550001");
    assertThat(saved.get("channels").toString()).isEqualTo("[\"sms\",\"push\"]");
    assertThat(saved.get("categories")).isEmpty();
    assertThat(saved.get("reason").asText()).isEqualTo("replied STOP <b>now</b>");
    assertThat(saved.get("addedBy").asText()).isEqualTo("support");
    assertThat(saved.get("expiresAt").asLong()).isBetween(before + Duration.ofDays(30).toMillis(),
        System.currentTimeMillis() + Duration.ofDays(30).toMillis());
    // it takes effect, in its scope only
    assertThat(blockedBy("sup-edit", "+15550001", "sms")).isEqualTo("[\"suppressed\"]");
    assertThat(blockedBy("sup-edit", "+15550001", "email")).isEqualTo("[]");

    // the entry is shown as the server has it, its reason as text (never as markup)
    assertThat(browser.id("sup-entry-recipient").getText()).isEqualTo("+15550001");
    assertThat(browser.id("sup-entry-channels").getText()).isEqualTo("sms, push");
    assertThat(browser.id("sup-entry-categories").getText()).isEqualTo("every category");
    assertThat(browser.id("sup-entry-reason").getText()).isEqualTo("replied STOP <b>now</b>");
    assertThat(browser.findAll("#sup-entry-reason b")).isEmpty();
    assertThat(browser.id("sup-entry-addedBy").getText()).isEqualTo("support");
    assertThat(browser.id("sup-entry-expiresAt").getText()).containsPattern("in (29d 23h|30d)");
    browser.waitVisible("#sup-list tr[data-recipient='+15550001']");
    assertThat(browser.find("#sup-list tr[data-recipient='+15550001']").getText()).contains("sms, push")
        .contains("replied STOP <b>now</b>").contains("by support");

    // a lookup finds it
    browser.open(server.base() + "/#suppressions");
    browser.waitText("#connection", "Connected");
    browser.type("sup-find-recipient", "+15550001");
    browser.id("sup-find").click();
    browser.waitText("#sup-entry-reason", "replied STOP");
    assertThat(browser.id("sup-none").isDisplayed()).isFalse();

    // bad input: what the browser can read is refused next to its field, the rest by the server there
    browser.id("sup-entry-edit").click();
    assertThat(browser.id("sup-channels").getAttribute("value")).isEqualTo("sms, push");
    browser.type("sup-expiresAt", "soonish");
    browser.id("sup-save").click();
    assertThat(browser.waitText("#sup-expiresAt-error", "is not a time")).contains("soonish");
    assertThat(browser.id("sup-expiresAt").getAttribute("aria-invalid")).isEqualTo("true");
    browser.type("sup-expiresAt", "2020-01-01 00:00");
    browser.id("sup-save").click();
    assertThat(browser.waitText("#sup-expiresAt-error", "expiresAt is in the past")).doesNotContain("soonish");
    browser.type("sup-expiresAt", "");
    browser.type("sup-reason", "x".repeat(257));
    browser.id("sup-save").click();
    browser.waitText("#sup-reason-error", "reason is longer than 256 characters");
    assertThat(browser.id("sup-expiresAt-error").getText()).isEmpty();
    assertThat(browser.id("sup-reason").getAttribute("aria-invalid")).isEqualTo("true");
    assertThat(entry("sup-edit", "+15550001").get("reason").asText()).isEqualTo("replied STOP <b>now</b>");
    assertThat(entry("sup-edit", "+15550001").get("expiresAt").asLong()).isEqualTo(saved.get("expiresAt").asLong());

    // cancelling the confirmation keeps the entry; confirming removes it
    browser.id("sup-entry-remove").click();
    browser.waitVisible("#confirm-dialog");
    assertThat(browser.id("confirm-text").getText()).contains("+15550001").contains("sup-edit");
    browser.id("confirm-cancel").click();
    browser.waitGone("#confirm-dialog");
    assertThat(entry("sup-edit", "+15550001")).isNotNull();
    browser.id("sup-entry-remove").click();
    browser.waitVisible("#confirm-dialog");
    browser.id("confirm-ok").click();
    browser.waitText("#sup-message", "+15550001 was removed from the suppression list");
    browser.waitText("#sup-none", "+15550001 is not suppressed");
    assertThat(browser.id("sup-entry").isDisplayed()).isFalse();
    browser.waitVisible("#sup-list-empty");
    assertThat(entry("sup-edit", "+15550001")).isNull();
    assertThat(blockedBy("sup-edit", "+15550001", "sms")).isEqualTo("[]");
  }

  @Test
  void anImportShowsItsProgressAndEachBadRowsLineAndTheListPages(@TempDir Path dir) throws IOException {
    Path csv = dir.resolve("stop-list.csv");
    Files.writeString(csv, String.join("\n",
        "recipient,channels,reason,expiresAt",
        "+8613800000001,sms,replied STOP,",
        "+8613800000002,,complaint,soon",
        "+8613800000003,sms|email,\"legal, block list\",4102444800000",
        "+8613800000004,,,") + "\n");
    connect("?pageSize=2#suppressions", "sup-import", SUPPORT);
    browser.waitVisible("#sup-list-empty");
    browser.id("sup-import").click();
    browser.waitText("#sup-file-error", "Choose a CSV or NDJSON file");

    browser.id("sup-file").sendKeys(csv.toString());
    assertThat(browser.id("sup-format").getAttribute("value")).isEqualTo("text/csv");
    browser.id("sup-import").click();
    assertThat(browser.waitText("#sup-import-result", "3 applied, 1 rejected")).contains("skipped");
    assertThat(browser.id("sup-import-status").getText()).contains("Imported stop-list.csv");
    assertThat(browser.id("sup-import-progress").getAttribute("value")).isEqualTo("100");
    List<WebElement> bad = browser.findAll("#sup-import-errors tbody tr");
    assertThat(bad).hasSize(1);
    assertThat(bad.get(0).getAttribute("data-line")).isEqualTo("3");
    assertThat(bad.get(0).getText()).contains("expiresAt").contains("epoch milliseconds");
    assertThat(entry("sup-import", "+8613800000001").get("reason").asText()).isEqualTo("replied STOP");
    assertThat(entry("sup-import", "+8613800000002")).isNull();
    assertThat(entry("sup-import", "+8613800000003").get("channels")).hasSize(2);
    assertThat(blockedBy("sup-import", "+8613800000004", "push")).isEqualTo("[\"suppressed\"]");

    // the list, two a page, in recipient order, by cursor
    browser.waitVisible("#sup-list tr[data-recipient='+8613800000001']");
    assertThat(recipientsListed()).containsExactly("+8613800000001", "+8613800000003");
    assertThat(browser.id("sup-prev").isEnabled()).isFalse();
    browser.id("sup-next").click();
    browser.waitVisible("#sup-list tr[data-recipient='+8613800000004']");
    assertThat(recipientsListed()).containsExactly("+8613800000004");
    assertThat(browser.id("sup-list-meta").getText()).contains("page 2");
    assertThat(browser.id("sup-next").isEnabled()).isFalse();
    browser.id("sup-prev").click();
    browser.waitVisible("#sup-list tr[data-recipient='+8613800000001']");
    // a row is removed from the list after its confirmation
    browser.click("#sup-list button[aria-label='Remove +8613800000003']");
    browser.waitVisible("#confirm-dialog");
    browser.id("confirm-ok").click();
    browser.waitText("#sup-message", "+8613800000003 was removed");
    browser.waitVisible("#sup-list tr[data-recipient='+8613800000004']");
    assertThat(entry("sup-import", "+8613800000003")).isNull();

    // NDJSON, told apart by the file's name; a line that is no JSON is reported by its number
    Path ndjson = dir.resolve("complaints.ndjson");
    Files.writeString(ndjson, "{\"recipient\": \"+8613800000005\", \"categories\": [\"marketing\"]}\n"
        + "not json\n{\"recipient\": \"+8613800000006\"}\n");
    browser.id("sup-file").sendKeys(ndjson.toString());
    assertThat(browser.id("sup-format").getAttribute("value")).isEqualTo("application/x-ndjson");
    browser.id("sup-import").click();
    browser.waitText("#sup-import-result", "2 applied, 1 rejected");
    browser.waitText("#sup-import-errors tr[data-line='2']", "not a JSON object");
    assertThat(entry("sup-import", "+8613800000005").get("categories").get(0).asText()).isEqualTo("marketing");

    // a header the server cannot read: reported on its line, nothing applied
    Path wrong = dir.resolve("wrong.csv");
    Files.writeString(wrong, "phone,colour\n1,red\n");
    browser.id("sup-file").sendKeys(wrong.toString());
    browser.id("sup-import").click();
    browser.waitText("#sup-import-result", "0 applied, 1 rejected");
    browser.waitText("#sup-import-errors tr[data-line='1']", "unknown column 'phone'");
  }

  /**
   * The upload's progress as it goes: the browser's uplink is throttled (DevTools network
   * emulation) so that a 2 MB file takes seconds to send, and the page is seen part way through.
   */
  @Test
  void aLargeImportShowsHowMuchIsUploaded(@TempDir Path dir) throws IOException {
    int rows = 60_000;
    StringBuilder csv = new StringBuilder("recipient,channels,reason\n");
    for (int i = 0; i < rows; i++) {
      csv.append(String.format("+86139%08d,sms,replied STOP\n", i));
    }
    Path file = dir.resolve("big.csv");
    Files.writeString(file, csv);
    connect("#suppressions", "sup-big", ADMIN);
    browser.driver.executeCdpCommand("Network.enable", Map.of());
    browser.driver.executeCdpCommand("Network.emulateNetworkConditions", Map.of("offline", false, "latency", 0,
        "downloadThroughput", -1, "uploadThroughput", 256 * 1024));
    try {
      browser.id("sup-file").sendKeys(file.toString());
      browser.id("sup-import").click();
      // the text and the bar, read together in the page: some share of the file, and the same share in both
      java.util.regex.Pattern partWay = java.util.regex.Pattern.compile("Uploading big\\.csv: ([1-9][0-9]?) % \\(");
      browser.waitUntil("the page shows the upload part way", () -> {
        @SuppressWarnings("unchecked")
        List<Object> seen = (List<Object>) browser.script("return [document.getElementById('sup-import-status')"
            + ".textContent, document.getElementById('sup-import-progress').value]");
        java.util.regex.Matcher m = partWay.matcher((String) seen.get(0));
        return m.find() && Long.parseLong(m.group(1)) == ((Number) seen.get(1)).longValue();
      });
    } finally {
      browser.driver.executeCdpCommand("Network.emulateNetworkConditions", Map.of("offline", false, "latency", 0,
          "downloadThroughput", -1, "uploadThroughput", -1));
    }
    browser.waitText("#sup-import-result", "60,000 applied, 0 rejected");
    assertThat(browser.id("sup-import-errors-wrap").isDisplayed()).isFalse();
    assertThat(entry("sup-big", "+8613900059999").get("reason").asText()).isEqualTo("replied STOP");
  }

  private static List<String> recipientsListed() {
    return browser.findAll("#sup-list tbody tr").stream().map(r -> r.getAttribute("data-recipient")).toList();
  }

  @Test
  void aKeyWithoutTheSuppressRoleGetsTheServersMessage(@TempDir Path dir) throws IOException {
    connect("#suppressions", "sup-edit", READER);
    assertThat(browser.waitText("#sup-message", "403")).contains("may not use the suppression list of tenant sup-edit")
        .contains("suppress");
    assertThat(browser.waitText("#alert-text", "403")).contains("may not do that");
    assertThat(browser.id("sup-list-wrap").isDisplayed()).isFalse();
    browser.id("alert-retry").click(); // dismiss
    browser.type("sup-recipient", "+15550009");
    browser.id("sup-save").click();
    browser.waitText("#sup-add-error", "Not saved");
    browser.type("sup-find-recipient", "+15550009");
    browser.id("sup-find").click();
    browser.waitText("#alert-text", "403");
    assertThat(browser.id("sup-entry").isDisplayed()).isFalse();
    assertThat(browser.id("sup-none").isDisplayed()).isFalse();
    Path csv = dir.resolve("one.csv");
    Files.writeString(csv, "recipient\n+15550009\n");
    browser.id("sup-file").sendKeys(csv.toString());
    browser.id("sup-import").click();
    assertThat(browser.waitText("#sup-file-error", "lacks the role")).contains("suppress");
    assertThat(browser.id("sup-import-result").isDisplayed()).isFalse();
    assertThat(entry("sup-edit", "+15550009")).isNull();
  }

  /**
   * A store that cannot list answers the listing 501: the page stands in for such a store by
   * answering that one call as the server does, and the rest of the view goes to the real server.
   */
  @Test
  void aStoreThatCannotListSaysSoAndTheRestStillWorks() {
    connect("#suppressions", "sup-list", ADMIN);
    browser.waitVisible("#sup-list-empty");
    browser.script("""
        const real = window.fetch;
        window.fetch = (url, init) => new URL(url, location.href).pathname === '/v1/suppressions'
          ? Promise.resolve(new Response(JSON.stringify({error: {code: 'suppressions_unsupported',
              message: 'this store does not list its entries; read an entry by its recipient'}}),
              {status: 501, headers: {'Content-Type': 'application/json'}}))
          : real.call(window, url, init);
        """);
    browser.id("tab-rules").click();
    browser.waitVisible("#view-rules");
    browser.id("tab-suppressions").click();
    assertThat(browser.waitText("#sup-list-message", "501")).contains("does not list its suppression entries")
        .contains("read an entry by its recipient").contains("Find, add, remove and import still work");
    assertThat(browser.id("sup-list-wrap").isDisplayed()).isFalse();
    assertThat(browser.id("sup-next").isEnabled()).isFalse();
    // no "server failed" banner: a missing feature is not a failure
    assertThat(browser.id("alert").isDisplayed()).isFalse();
    browser.type("sup-recipient", "+15550042");
    browser.type("sup-categories", "marketing");
    browser.id("sup-save").click();
    browser.waitText("#sup-message", "+15550042 is suppressed (every channel; marketing)");
    assertThat(entry("sup-list", "+15550042").get("categories").get(0).asText()).isEqualTo("marketing");
  }

  @Test
  void expiriesAreReadAsASpanOrADate() {
    connect("#suppressions", "sup-list", ADMIN);
    @SuppressWarnings("unchecked")
    Map<String, Object> r = (Map<String, Object>) browser.driver.executeAsyncScript("""
        const done = arguments[arguments.length - 1];
        import('/console/js/suppressions.js').then((s) => done({
          span: s.parseExpiry('1d 12h', 1000), weeks: s.parseExpiry('2w', 0),
          utc: s.parseExpiry('2026-12-31T18:00Z', 0), utcDay: s.parseExpiry('2026-12-31 UTC', 0),
          local: s.parseExpiry('2026-12-31 18:00', 0) === new Date(2026, 11, 31, 18, 0).getTime(),
          noSuchDay: s.parseExpiry('2026-02-30', 0), word: s.parseExpiry('tomorrow', 0),
          bare: s.parseExpiry('30', 0)}));
        """);
    assertThat(((Number) r.get("span")).longValue()).isEqualTo(1000 + Duration.ofHours(36).toMillis());
    assertThat(((Number) r.get("weeks")).longValue()).isEqualTo(Duration.ofDays(14).toMillis());
    assertThat(((Number) r.get("utc")).longValue()).isEqualTo(Instant.parse("2026-12-31T18:00:00Z").toEpochMilli());
    assertThat(((Number) r.get("utcDay")).longValue()).isEqualTo(Instant.parse("2026-12-31T00:00:00Z").toEpochMilli());
    assertThat(r.get("local")).isEqualTo(true);
    assertThat(r.get("noSuchDay")).isNull();
    assertThat(r.get("word")).isNull();
    assertThat(r.get("bare")).isNull();
  }
}
