package dev.fcap.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fcap.store.Store;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A real server on a free loopback port, with its rules file and audit in a temporary directory, and
 * a small HTTP client for the tests.
 */
final class TestServer implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();
  final Path dir;
  final FcapServer server;
  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  String apiKey;

  private TestServer(Path dir, FcapServer server) {
    this.dir = dir;
    this.server = server;
  }

  /** A server with the given rules YAML (null: the seed policy) and extra settings. */
  static TestServer start(String rulesYaml, Map<String, String> settings) {
    return start(rulesYaml, settings, (Store) null);
  }

  static TestServer start(String rulesYaml, Map<String, String> settings, Store store) {
    return start(rulesYaml, settings, b -> store == null ? b : b.store(store));
  }

  /** {@link #start(String, Map)} with the builder set further by {@code builder} (a clock the test moves). */
  static TestServer start(String rulesYaml, Map<String, String> settings,
      java.util.function.UnaryOperator<FcapServer.Builder> builder) {
    try {
      Path dir = Files.createTempDirectory("fcap-server-test");
      Path rules = dir.resolve("rules.yaml");
      if (rulesYaml != null) {
        Files.writeString(rules, rulesYaml);
      }
      Map<String, String> all = new HashMap<>();
      all.put("listen", "127.0.0.1:0");
      all.put("rules.source", rules.toString());
      all.put("audit.sink", "file:" + dir.resolve("audit.jsonl"));
      all.put("shutdown.grace", "2s");
      all.putAll(settings);
      ServerConfig config = ConfigLoader.load(null, Map.of(), all);
      return new TestServer(dir, builder.apply(FcapServer.builder(config)).start());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static TestServer seed() {
    return start(null, Map.of());
  }

  TestServer as(String key) {
    this.apiKey = key;
    return this;
  }

  String base() {
    return "http://127.0.0.1:" + server.port();
  }

  /** A response: status, parsed JSON body (null if not JSON), headers. */
  record Reply(int status, JsonNode body, HttpResponse<String> raw) {
    String errorCode() {
      return body.path("error").path("code").asText(null);
    }

    String errorField() {
      return body.path("error").path("field").asText(null);
    }
  }

  Reply post(String path, String body) {
    return send("POST", path, body, Map.of());
  }

  Reply get(String path) {
    return send("GET", path, null, Map.of());
  }

  Reply delete(String path) {
    return send("DELETE", path, null, Map.of());
  }

  Reply put(String path, String body, Map<String, String> headers) {
    return send("PUT", path, body, headers);
  }

  Reply send(String method, String path, String body, Map<String, String> headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base() + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null && !headers.containsKey("Content-Type")) {
      b.header("Content-Type", "application/json");
    }
    if (apiKey != null) {
      b.header("Authorization", "Bearer " + apiKey);
    }
    headers.forEach(b::header);
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      JsonNode json = null;
      String type = r.headers().firstValue("content-type").orElse("");
      if (type.contains("json")) {
        json = JSON.readTree(r.body());
      }
      return new Reply(r.statusCode(), json, r);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Decides {@code {"recipient": r, ...extra}} and returns the decision. */
  Reply decide(String json) {
    return post("/v1/decisions", json);
  }

  @Override
  public void close() {
    server.close();
  }
}
