package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Keeps {@code /openapi.json} true: every response of a running server, errors included, is
 * validated (networknt json-schema-validator, JSON Schema 2020-12, the dialect of OpenAPI 3.1)
 * against the schema the description gives for its path, method, status and content type; a
 * response the description does not foresee fails; and every (path, method, status) the description
 * lists must have been produced by a real request, so the description cannot promise what the server
 * never does. Request bodies that the server accepts are validated against the request schema too.
 */
class OpenApiIT {
  static {
    // the validator warns once per keyword of the document around the schemas (openapi, paths, ...)
    System.setProperty("org.slf4j.simpleLogger.log.com.networknt.schema", "error");
  }

  private static final String SPEC = "classpath:fcap/openapi.json";
  private static final JsonSchemaFactory SCHEMAS = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);
  private static final String RULE = "{\"id\": \"extra\", \"limit\": 5, \"window\": \"1h\", \"key\": [\"recipient\"]}";
  private static final String POLICY = "{\"rules\": [{\"id\": \"recipient-per-minute\", \"limit\": 15, \"window\": "
      + "\"1m\", \"key\": [\"recipient\"]}, {\"id\": \"shadowed\", \"limit\": 1, \"window\": \"1h\", \"key\": [\"recipient\","
      + " \"category\"], \"match\": {\"category\": [\"marketing\"]}, \"mode\": \"shadow\", \"algorithm\": \"sliding-counter\","
      + " \"precision\": 10}]}";
  private static final String BAD_POLICY = "{\"rules\": [{\"id\": \"x\", \"limit\": -1, \"window\": \"soon\", \"key\": "
      + "[\"recipient\"]}]}";

  private final JsonNode spec = load();
  private final Set<String> produced = new TreeSet<>();

  @Test
  void everyResponseOfEveryEndpointMatchesTheDescriptionAndEveryDescribedResponseHappens() {
    String keys = "[{name: ops, sha256: " + AuthIT.hash("ops") + ", tenants: ['*'], roles: [decide, read, admin]},"
        + " {name: reader, sha256: " + AuthIT.hash("reader") + ", tenants: ['*'], roles: [read]},"
        + " {name: sender, sha256: " + AuthIT.hash("sender") + ", tenants: ['*'], roles: [decide]}]";
    try (TestServer s = TestServer.start(null, Map.of("apiKeys", keys, "limits.maxBodyBytes", "64KB",
        "limits.maxBatch", "3", "limits.maxAttributes", "2"))) {
      s.as("ops");
      JsonNode served = call(s, "GET", "/openapi.json", null, Map.of()).body();
      assertThat(served).isEqualTo(spec);

      decisions(s);
      recipients(s);
      suppressions(s);
      rules(s);
      call(s, "GET", "/metrics", null, Map.of());
      call(s, "GET", "/health", null, Map.of());
      call(s, "GET", "/ready", null, Map.of());
      unauthenticatedAndForbidden(s);
      // outside the paths: unknown routes and methods answer the same error shape
      assertThat(validate(s.send("GET", "/v1/nothing", null, Map.of()), "#/components/schemas/Error").status())
          .isEqualTo(404);
      assertThat(validate(s.send("PATCH", "/v1/decisions", "{}", Map.of()), "#/components/schemas/Error").status())
          .isEqualTo(405);
    }
    storeDown();
    storeWithoutSuppressionLists();
    storeBusyAndUnavailable();
    refusedBeforeAnyHandler();
    eraseFailed();
    assertThat(produced).containsExactlyInAnyOrderElementsOf(described());
  }

  private void decisions(TestServer s) {
    JsonNode allowed = call(s, "POST", "/v1/decisions", "{\"recipient\": \"+8613800000000\", \"content\": \"code 1\", "
        + "\"channel\": \"sms\", \"attributes\": {\"campaign\": \"c1\"}}", Map.of()).body();
    assertThat(allowed.get("allowed").asBoolean()).isTrue();
    call(s, "POST", "/v1/decisions", "{\"recipient\": \"+8613800000000\", \"content\": \"code 1\"}", Map.of());
    JsonNode denied = call(s, "POST", "/v1/decisions", "{\"recipient\": \"+8613800000000\", \"content\": \"code 1\"}",
        Map.of()).body();
    assertThat(denied.get("allowed").asBoolean()).isFalse();
    JsonNode deferred = call(s, "POST", "/v1/decisions", "{\"recipient\": \"+8613800000000\", \"content\": \"code 1\", "
        + "\"defer\": true, \"notAfter\": \"" + java.time.Instant.now().plus(Duration.ofHours(1)) + "\"}", Map.of()).body();
    assertThat(deferred.get("deferred").asBoolean()).as("booked for when the identical messages leave 59 s").isTrue();
    assertThat(call(s, "POST", "/v1/decisions", "{\"recipient\": \"r\", \"notAfter\": 1}", Map.of()).errorField())
        .isEqualTo("notAfter");
    call(s, "POST", "/v1/decisions", "{\"recipient\": \"r\", \"dryRun\": true}", Map.of());
    assertThat(call(s, "POST", "/v1/decisions", "{\"recipient\": \"r\", \"attributes\": {\"a\": \"1\", \"b\": \"2\", "
        + "\"c\": \"3\"}}", Map.of()).status()).as("a shape limit").isEqualTo(400);
    assertThat(call(s, "POST", "/v1/decisions", "{\"recipient\": \"r\", \"cots\": 1}", Map.of()).status()).isEqualTo(400);
    assertThat(call(s, "POST", "/v1/decisions", "{\"recipient\": ", Map.of()).status()).isEqualTo(400);
    String big = "{\"recipient\": \"r\", \"content\": \"" + "x".repeat(70_000) + "\"}";
    assertThat(call(s, "POST", "/v1/decisions", big, Map.of()).status()).isEqualTo(413);

    JsonNode batch = call(s, "POST", "/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"b1\"}, {\"recipient\": 7},"
        + " {\"recipient\": \"b2\", \"cost\": 2}]}", Map.of()).body();
    assertThat(batch.get("results").get(1).get("error").get("field").asText()).isEqualTo("recipient");
    assertThat(call(s, "POST", "/v1/decisions/batch", "{\"requests\": [{}, {}, {}, {}]}", Map.of()).status())
        .isEqualTo(400);
    assertThat(call(s, "POST", "/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"" + "y".repeat(70_000)
        + "\"}]}", Map.of()).status()).isEqualTo(413);

    JsonNode first = call(s, "POST", "/v1/decisions", "{\"recipient\": \"idem\", \"messageId\": \"m-1\"}", Map.of())
        .body();
    JsonNode again = call(s, "POST", "/v1/decisions", "{\"recipient\": \"idem\", \"messageId\": \"m-1\"}", Map.of())
        .body();
    assertThat(again.get("replayed").asBoolean()).isTrue();
    assertThat(again.get("decisionId")).isEqualTo(first.get("decisionId"));
    assertThat(call(s, "POST", "/v1/messages/release", "{\"recipient\": \"idem\", \"messageId\": \"m-1\"}", Map.of())
        .body().get("released").asBoolean()).isTrue();
    assertThat(call(s, "POST", "/v1/messages/release", "{\"recipient\": \"idem\"}", Map.of()).status()).isEqualTo(400);

    String id = allowed.get("decisionId").asText();
    assertThat(call(s, "POST", "/v1/decisions/" + id + "/release", null, Map.of()).body().get("released").asBoolean())
        .isTrue();
    // release is idempotent: a retry (after a timeout, on another node) answers released again
    assertThat(call(s, "POST", "/v1/decisions/" + id + "/release", null, Map.of()).body().get("released").asBoolean())
        .isTrue();
    // a garbled, forged, non-ASCII or long id: released false with a reason, never a silent false
    String forged = id.substring(0, id.length() - 2) + (id.endsWith("A") ? "BB" : "AA");
    for (String hostile : List.of(forged, "d" + "z".repeat(3000), "%C3%A9t%C3%A9", "000000000000ffffffffffff")) {
      JsonNode r = call(s, "POST", "/v1/decisions/" + hostile + "/release", null, Map.of()).body();
      assertThat(r.get("released").asBoolean()).as(hostile).isFalse();
      assertThat(r.get("reason").asText()).as(hostile).isEqualTo("unknown");
    }
    assertThat(call(s, "POST", "/v1/decisions/" + "z".repeat(4001) + "/release", null, Map.of()).status())
        .isEqualTo(400);
  }

  private void recipients(TestServer s) {
    JsonNode inspection = call(s, "GET", "/v1/recipients/+8613800000000", null, Map.of()).body();
    assertThat(inspection.get("recentDenials").size()).isPositive();
    assertThat(inspection.get("booked").size()).as("the deferred decision").isPositive();
    assertThat(call(s, "GET", "/v1/recipients/r?tenant=no%20spaces", null, Map.of()).status()).isEqualTo(400);
    assertThat(call(s, "DELETE", "/v1/recipients/+8613800000000", null, Map.of()).body().get("reset").asBoolean())
        .isTrue();
    assertThat(call(s, "DELETE", "/v1/recipients/r?tenant=no%20spaces", null, Map.of()).status()).isEqualTo(400);
  }

  private void rules(TestServer s) {
    String etag = call(s, "GET", "/v1/rules", null, Map.of()).raw().headers().firstValue("etag").orElseThrow();
    assertThat(call(s, "GET", "/v1/rules?tenant=no%20spaces", null, Map.of()).status()).isEqualTo(400);
    assertThat(call(s, "PUT", "/v1/rules", POLICY, Map.of("If-Match", etag)).status()).isEqualTo(200);
    assertThat(call(s, "PUT", "/v1/rules", POLICY, Map.of("If-Match", "\"999\"")).status()).isEqualTo(412);
    JsonNode refused = call(s, "PUT", "/v1/rules", BAD_POLICY, Map.of()).body();
    assertThat(refused.get("error").get("errors").size()).isGreaterThanOrEqualTo(2);
    assertThat(call(s, "POST", "/v1/rules", RULE, Map.of()).status()).isEqualTo(201);
    assertThat(call(s, "POST", "/v1/rules", RULE, Map.of()).status()).isEqualTo(409);
    assertThat(call(s, "POST", "/v1/rules", RULE.replace("extra", "extra2"), Map.of("If-Match", "\"999\"")).status())
        .isEqualTo(412);
    assertThat(call(s, "POST", "/v1/rules", "{\"id\": 3}", Map.of()).status()).isEqualTo(400);
    assertThat(call(s, "GET", "/v1/rules/shadowed", null, Map.of()).status()).isEqualTo(200);
    assertThat(call(s, "GET", "/v1/rules/missing", null, Map.of()).status()).isEqualTo(404);
    assertThat(call(s, "GET", "/v1/rules/extra?tenant=no%20spaces", null, Map.of()).status()).isEqualTo(400);
    assertThat(call(s, "PUT", "/v1/rules/extra", "{\"limit\": 6, \"window\": \"1h\", \"key\": [\"recipient\"], "
        + "\"exempt\": {\"category\": [\"transactional\"]}}", Map.of()).status()).isEqualTo(200);
    assertThat(call(s, "PUT", "/v1/rules/extra", "{\"limit\": 0}", Map.of()).status()).isEqualTo(400);
    assertThat(call(s, "PUT", "/v1/rules/extra", RULE, Map.of("If-Match", "\"999\"")).status()).isEqualTo(412);
    assertThat(call(s, "DELETE", "/v1/rules/extra", null, Map.of("If-Match", "\"999\"")).status()).isEqualTo(412);
    assertThat(call(s, "DELETE", "/v1/rules/extra", null, Map.of()).status()).isEqualTo(200);
    assertThat(call(s, "DELETE", "/v1/rules/extra", null, Map.of()).status()).isEqualTo(404);
    assertThat(call(s, "DELETE", "/v1/rules/x?tenant=no%20spaces", null, Map.of()).status()).isEqualTo(400);
    assertThat(call(s, "POST", "/v1/rules/validate", POLICY, Map.of()).status()).isEqualTo(200);
    assertThat(call(s, "POST", "/v1/rules/validate", BAD_POLICY, Map.of()).status()).isEqualTo(400);
    JsonNode history = call(s, "GET", "/v1/rules/history", null, Map.of()).body();
    assertThat(history.get("changes").size()).isGreaterThanOrEqualTo(4);
    assertThat(call(s, "GET", "/v1/rules/history?tenant=no%20spaces", null, Map.of()).status()).isEqualTo(400);
  }

  /** Every operation that needs a key: 401 without one, 403 with a key that lacks the role. */
  private void unauthenticatedAndForbidden(TestServer s) {
    for (String[] op : operations()) {
      if (op[2] != null && spec.at(op[2] + "/security").isArray()) {
        continue;
      }
      String path = concrete(op[0]);
      String body = body(op);
      s.as(null);
      assertThat(call(s, op[1], path, body, Map.of()).status()).as(op[1] + " " + path).isEqualTo(401);
      if (op[0].equals("/v1/decisions/batch")) {
        continue; // a key without the decide role gets its refusal per item, in a 200
      }
      s.as("reader");
      int status = call(s, op[1], path, body, Map.of()).status();
      if (status != 403) {
        s.as("sender");
        status = call(s, op[1], path, body, Map.of()).status();
      }
      assertThat(status).as(op[1] + " " + path + " with a key that lacks the role").isEqualTo(403);
    }
    s.as("ops");
  }

  private void suppressions(TestServer s) {
    assertThat(call(s, "PUT", "/v1/suppressions/stop", "{\"channels\": [\"sms\"], \"categories\": [\"marketing\"], "
        + "\"reason\": \"replied STOP\", \"expiresAt\": 4102444800000}", Map.of()).status()).isEqualTo(200);
    assertThat(call(s, "PUT", "/v1/suppressions/plain", null, Map.of()).status()).isEqualTo(200);
    assertThat(call(s, "PUT", "/v1/suppressions/stop", "{\"channel\": [\"sms\"]}", Map.of()).status()).isEqualTo(400);
    assertThat(call(s, "PUT", "/v1/suppressions/stop", "{\"channels\": [\"sms\"], \"categories\": [\"marketing\"], "
        + "\"reason\": \"replied STOP\", \"expiresAt\": 1000}", Map.of()).status()).as("expired").isEqualTo(400);
    JsonNode refused = call(s, "POST", "/v1/decisions", "{\"recipient\": \"stop\", \"channel\": \"sms\", "
        + "\"category\": \"marketing\"}", Map.of()).body();
    assertThat(refused.get("suppressedReason").asText()).isEqualTo("replied STOP");
    assertThat(call(s, "GET", "/v1/suppressions/stop", null, Map.of()).body().get("reason").asText())
        .isEqualTo("replied STOP");
    assertThat(call(s, "GET", "/v1/suppressions/nobody", null, Map.of()).status()).isEqualTo(404);
    assertThat(call(s, "GET", "/v1/suppressions/r?tenant=no%20spaces", null, Map.of()).status()).isEqualTo(400);
    JsonNode page = call(s, "GET", "/v1/suppressions?limit=1", null, Map.of()).body();
    assertThat(call(s, "GET", "/v1/suppressions?limit=1&cursor=" + page.get("nextCursor").asText(), null, Map.of())
        .body().get("items")).hasSize(1);
    assertThat(call(s, "GET", "/v1/suppressions?limit=0", null, Map.of()).status()).isEqualTo(400);
    assertThat(call(s, "DELETE", "/v1/suppressions/plain", null, Map.of()).body().get("removed").asBoolean()).isTrue();
    TestServer.Reply imported = s.send("POST", "/v1/suppressions/import", "recipient,reason\nc1,STOP\nc2\n",
        Map.of("Content-Type", "text/csv"));
    check("POST", "/v1/suppressions/import", imported.status(), "application/json", imported.raw().body(), null);
    assertThat(imported.body().get("rejected").asLong()).isEqualTo(1);
    TestServer.Reply ndjson = s.send("POST", "/v1/suppressions/import?tenant=no%20spaces", "{}",
        Map.of("Content-Type", "application/x-ndjson"));
    check("POST", "/v1/suppressions/import", ndjson.status(), "application/json", ndjson.raw().body(), null);
    assertThat(ndjson.status()).isEqualTo(400);
    assertThat(call(s, "POST", "/v1/suppressions/import", "{}", Map.of()).status()).isEqualTo(415);
    assertThat(call(s, "DELETE", "/v1/suppressions/r?tenant=no%20spaces", null, Map.of()).status()).isEqualTo(400);
  }

  /** A store that keeps no suppression lists: every suppression operation answers 501. */
  private void storeWithoutSuppressionLists() {
    Store bare = new dev.fcap.store.ForwardingStore(MemoryStore.builder().build()) {
      @Override
      public <T> java.util.Optional<T> as(Class<T> type) {
        return type == dev.fcap.store.SuppressionList.class ? java.util.Optional.empty() : super.as(type);
      }
    };
    try (TestServer s = TestServer.start(null, Map.of(), bare)) {
      for (String[] op : operations()) {
        if (op[0].startsWith("/v1/suppressions")) {
          assertThat(call(s, op[1], concrete(op[0]), body(op), Map.of()).status()).as(op[1] + " " + op[0])
              .isEqualTo(501);
        }
      }
    }
  }

  /** A store that is down: an outage once declared; readiness fails, reset answers 503, release is local. */
  private void storeDown() {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    try (TestServer s = TestServer.start(null, Map.of(), store)) {
      String id = call(s, "POST", "/v1/decisions", "{\"recipient\": \"r\"}", Map.of()).body().get("decisionId").asText();
      store.mode = FlakyStore.Mode.DOWN;
      // 503 store_unavailable until the outage is declared (failure.window), then the failure policy answers
      Awaitility.await("the outage is declared").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20))
          .pollInSameThread()
          .until(() -> call(s, "POST", "/v1/decisions", "{\"recipient\": \"r\"}", Map.of()).status() == 200);
      var during = call(s, "POST", "/v1/decisions", "{\"recipient\": \"r\"}", Map.of()).body();
      assertThat(during.get("degraded").asBoolean()).isTrue();
      var released = call(s, "POST", "/v1/decisions/" + during.get("decisionId").asText() + "/release", null, Map.of());
      assertThat(released.status()).as("a decision of the outage store is released by it").isEqualTo(200);
      assertThat(released.body().get("released").asBoolean()).isTrue();
      assertThat(call(s, "GET", "/ready", null, Map.of()).status()).isEqualTo(503);
      assertThat(call(s, "POST", "/v1/decisions/" + id + "/release", null, Map.of()).status())
          .as("the release record is in the store: retry after the outage").isEqualTo(503);
      assertThat(call(s, "DELETE", "/v1/recipients/r", null, Map.of()).status()).isEqualTo(503);
    }
  }

  /**
   * A store that answers late (429 {@code store_busy}) or not at all before an outage is declared (503
   * {@code store_unavailable}): every operation that reaches the store says so, with Retry-After.
   */
  private void storeBusyAndUnavailable() {
    FlakyStore store = new FlakyStore(MemoryStore.builder().build());
    // a long failure window: the store stays "unavailable", never an outage answered by the failure policy
    try (TestServer s = TestServer.start(null, Map.of("store.timeout", "200ms", "failure.window", "10m"), store)) {
      for (FlakyStore.Mode mode : List.of(FlakyStore.Mode.HANG, FlakyStore.Mode.DOWN)) {
        store.mode = FlakyStore.Mode.UP;
        // a fresh decision per mode: a release that got 429 is already marked released
        String id = call(s, "POST", "/v1/decisions", "{\"recipient\": \"r-" + mode + "\"}", Map.of()).body()
            .get("decisionId").asText();
        store.mode = mode;
        int expected = mode == FlakyStore.Mode.HANG ? 429 : 503;
        List<TestServer.Reply> replies = List.of(
            call(s, "POST", "/v1/decisions", "{\"recipient\": \"r\"}", Map.of()),
            call(s, "POST", "/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"r\"}]}", Map.of()),
            call(s, "POST", "/v1/decisions/" + id + "/release", null, Map.of()),
            call(s, "POST", "/v1/messages/release", "{\"recipient\": \"r\", \"messageId\": \"m\"}", Map.of()),
            call(s, "GET", "/v1/recipients/r", null, Map.of()),
            call(s, "DELETE", "/v1/recipients/r", null, Map.of()));
        for (TestServer.Reply r : replies) {
          assertThat(r.status()).as("%s %s with the store %s: %s", r.raw().request().method(), r.raw().uri(), mode,
              r.raw().body()).isEqualTo(expected);
          assertThat(r.raw().headers().firstValue("retry-after")).hasValue("1");
        }
      }
    }
  }

  /**
   * Refusals before any handler, on a server without keys: a foreign Host or Origin (403) on every
   * operation; on every operation that takes a body, a body that is not JSON (415), one over the byte
   * limit (413) and one that arrives slower than {@code http.requestTimeout} (408).
   */
  /** A reset whose recipient's saved recent denials can be neither rewritten nor deleted: 500 erase_failed. */
  private void eraseFailed() {
    try {
      Path dir = Files.createTempDirectory("fcap-openapi-erase");
      Path saved = dir.resolve("recent-denials.json");
      Files.writeString(saved, "{\"version\": 1, \"recipients\": [{\"tenant\": \"default\", \"recipient\": \"gone\", "
          + "\"denials\": [{\"decisionId\": \"d1\", \"time\": 1, \"blockedBy\": [\"recipient-per-minute\"]}]}]}");
      try (TestServer s = TestServer.start(null, Map.of("rules.source", dir.resolve("rules.yaml").toString()))) {
        Files.delete(saved);
        Files.createDirectories(saved.resolve("in-the-way"));
        TestServer.Reply r = call(s, "DELETE", "/v1/recipients/gone", null, Map.of());
        assertThat(r.status()).isEqualTo(500);
        assertThat(r.errorCode()).isEqualTo("erase_failed");
        Files.delete(saved.resolve("in-the-way"));
        Files.delete(saved);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void refusedBeforeAnyHandler() {
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
    try (TestServer s = TestServer.start(null, Map.of("http.requestTimeout", "1s", "limits.maxBodyBytes", "64KB"))) {
      List<String[]> slowOps = new ArrayList<>();
      List<java.util.concurrent.CompletableFuture<RawHttp.Response>> slow = new ArrayList<>();
      for (String[] op : operations()) {
        String path = concrete(op[0]);
        String body = body(op);
        if (body == null) {
          continue;
        }
        slowOps.add(op);
        slow.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> RawHttp.send(s.server.port(), op[1], path,
            Map.of("Content-Type", "application/json", "Content-Length", "100"), "{"), pool));
      }
      for (String[] op : operations()) {
        String path = concrete(op[0]);
        String body = body(op);
        Map<String, String> json = body == null ? Map.of() : Map.of("Content-Type", "application/json");
        assertThat(raw(s, op[1], path, with(json, "Host", "rebinding.example"), body).errorCode())
            .as("%s %s from a foreign Host", op[1], path).isEqualTo("forbidden_host");
        assertThat(raw(s, op[1], path, with(json, "Origin", "https://elsewhere.example"), body).errorCode())
            .as("%s %s from a foreign Origin", op[1], path).isEqualTo("forbidden_origin");
        if (body != null) {
          assertThat(raw(s, op[1], path, Map.of("Content-Type", "text/plain"), body).errorCode())
              .as("%s %s with a text/plain body", op[1], path).isEqualTo("unsupported_media_type");
          String big = "{\"recipient\": \"" + "x".repeat(70_000) + "\"}";
          assertThat(raw(s, op[1], path, json, big).status()).as("%s %s with a body over the limit", op[1], path)
              .isEqualTo(413);
        }
      }
      for (int i = 0; i < slow.size(); i++) {
        RawHttp.Response r = slow.get(i).join();
        String[] op = slowOps.get(i);
        assertThat(r.errorCode()).as("%s %s with a slow body", op[1], op[0]).isEqualTo("request_timeout");
        String type = r.head().lines().filter(l -> l.regionMatches(true, 0, "content-type:", 0, 13)).findFirst()
            .map(l -> l.substring(13)).orElse("");
        check(op[1], concrete(op[0]), r.status(), type, r.body(), null);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static Map<String, String> with(Map<String, String> headers, String name, String value) {
    Map<String, String> all = new java.util.HashMap<>(headers);
    all.put(name, value);
    return all;
  }

  /** A path of the template that exists in the seed policy. */
  private static String concrete(String template) {
    return template.replace("{decisionId}", "000000000000000000000001").replace("{recipient}", "r")
        .replace("{id}", "recipient-per-minute");
  }

  /** A valid request body for the operation, or null when it takes none. */
  private static String body(String[] op) {
    return switch (op[1] + " " + op[0]) {
      case "POST /v1/decisions" -> "{\"recipient\": \"r\"}";
      case "POST /v1/decisions/batch" -> "{\"requests\": [{\"recipient\": \"r\"}]}";
      case "POST /v1/messages/release" -> "{\"recipient\": \"r\", \"messageId\": \"m\"}";
      case "PUT /v1/rules", "POST /v1/rules/validate" -> POLICY;
      case "POST /v1/rules", "PUT /v1/rules/{id}" -> RULE;
      case "PUT /v1/suppressions/{recipient}" -> "{\"reason\": \"replied STOP\"}";
      default -> null;
    };
  }

  // --- the validator -----------------------------------------------------------------------------

  /** Sends a request and validates the response against the operation's description. */
  private TestServer.Reply call(TestServer s, String method, String pathAndQuery, String body,
      Map<String, String> headers) {
    TestServer.Reply r = s.send(method, pathAndQuery, body, headers);
    String type = r.raw().headers().firstValue("content-type").orElse("");
    check(method, pathAndQuery, r.status(), type, r.raw().body(), body);
    return r;
  }

  /** Sends a raw request (any Host, Content-Type, or a body slower than its Content-Length) and validates the answer. */
  private RawHttp.Response raw(TestServer s, String method, String pathAndQuery, Map<String, String> headers,
      String body) {
    RawHttp.Response r = RawHttp.send(s.server.port(), method, pathAndQuery, headers, body);
    String type = r.head().lines().filter(l -> l.regionMatches(true, 0, "content-type:", 0, 13)).findFirst()
        .map(l -> l.substring(13)).orElse("");
    check(method, pathAndQuery, r.status(), type, r.body(), null);
    return r;
  }

  /** Validates one answer against the description of its operation and status, and notes it as produced. */
  private void check(String method, String pathAndQuery, int status, String contentType, String responseBody,
      String requestBody) {
    String path = pathAndQuery.replaceFirst("\\?.*", "");
    String template = template(path);
    String op = "/paths/" + escape(template) + "/" + method.toLowerCase(java.util.Locale.ROOT);
    assertThat(spec.at(op).isObject()).as("%s %s is described", method, template).isTrue();
    String response = op + "/responses/" + status;
    assertThat(spec.at(response).isObject()).as("%s %s: status %d is described (body %s)", method, template,
        status, responseBody).isTrue();
    String type = contentType.replaceFirst(";.*", "").trim();
    JsonNode content = spec.at(response + "/content");
    assertThat(content.has(type)).as("%s %s %d: content type %s is described", method, template, status, type)
        .isTrue();
    if (type.equals("application/json")) {
      assertValid(responseBody, "#" + response + "/content/application~1json/schema", method + " " + pathAndQuery
          + " -> " + status);
      // a batch answers 200 with per-item errors for items that break the Message schema: such a
      // request is outside the description on purpose
      if (requestBody != null && status / 100 == 2 && !responseBody.contains("\"error\"")) {
        assertValid(requestBody, "#" + op + "/requestBody/content/application~1json/schema", method + " " + template
            + " request");
      }
    }
    produced.add(method + " " + template + " " + status);
  }

  private TestServer.Reply validate(TestServer.Reply r, String pointer) {
    assertValid(r.raw().body(), pointer, r.raw().request().method() + " " + r.raw().uri() + " -> " + r.status());
    return r;
  }

  private static void assertValid(String json, String pointer, String what) {
    JsonSchema schema = SCHEMAS.getSchema(SchemaLocation.of(SPEC + pointer));
    try {
      Set<ValidationMessage> errors = schema.validate(TestServer.JSON.readTree(json));
      assertThat(errors).as("%s against %s: %s", what, pointer, json.length() > 2000 ? json.substring(0, 2000) : json)
          .isEmpty();
    } catch (java.io.IOException e) {
      throw new AssertionError(what + ": not JSON: " + json, e);
    }
  }

  /** The described path whose template matches {@code path} (literal paths win over templates). */
  private String template(String path) {
    String found = null;
    for (Iterator<String> it = spec.get("paths").fieldNames(); it.hasNext(); ) {
      String t = it.next();
      if (t.equals(path)) {
        return t;
      }
      if (Pattern.matches(t.replaceAll("\\{[^}]+}", "[^/]+"), path) && found == null) {
        found = t;
      }
    }
    assertThat(found).as("a described path matches %s", path).isNotNull();
    return found;
  }

  /** Every (path, method, pointer) of the description. */
  private List<String[]> operations() {
    List<String[]> ops = new ArrayList<>();
    spec.get("paths").fields().forEachRemaining(p -> p.getValue().fieldNames().forEachRemaining(m -> ops.add(
        new String[] {p.getKey(), m.toUpperCase(java.util.Locale.ROOT), "/paths/" + escape(p.getKey()) + "/" + m})));
    return ops;
  }

  private Set<String> described() {
    Set<String> all = new TreeSet<>();
    for (String[] op : operations()) {
      spec.at(op[2] + "/responses").fieldNames().forEachRemaining(status -> all.add(op[1] + " " + op[0] + " " + status));
    }
    return all;
  }

  private static String escape(String pointerToken) {
    return pointerToken.replace("~", "~0").replace("/", "~1");
  }

  private static JsonNode load() {
    try (InputStream in = OpenApiIT.class.getClassLoader().getResourceAsStream("fcap/openapi.json")) {
      JsonNode doc = TestServer.JSON.readTree(in);
      assertThat(doc.get("openapi").asText()).startsWith("3.1");
      return doc;
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }
}
