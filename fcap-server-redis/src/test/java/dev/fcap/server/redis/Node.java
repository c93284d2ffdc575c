package dev.fcap.server.redis;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fcap.server.ConfigLoader;
import dev.fcap.server.FcapServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * One fcap server node on a free loopback port, configured through settings as {@code fcap.yaml} would
 * (so the store, rules source and audit sink are opened by {@link RedisStoreProvider} through
 * ServiceLoader), with a small HTTP client.
 */
final class Node implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();
  final FcapServer server;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  private Node(FcapServer server) {
    this.server = server;
  }

  /**
   * A node with store, rules and audit on {@code redisUri} (rules under {@code rulesKey}, audit in the
   * stream {@code stream}), plus extra settings.
   */
  static Node onRedis(String redisUri, String rulesKey, String stream, Map<String, String> extra) {
    Map<String, String> s = new HashMap<>();
    s.put("listen", "127.0.0.1:0");
    s.put("store.uri", redisUri);
    s.put("store.timeout", "500ms");
    s.put("rules.source", redisUri + "?key=" + rulesKey);
    s.put("audit.sink", redisUri + "?stream=" + stream + "&maxlen=10000");
    s.put("audit.sampleAdmissions", "0");
    s.put("shutdown.grace", "2s");
    s.putAll(extra);
    return new Node(FcapServer.start(ConfigLoader.load(null, Map.of(), s)));
  }

  record Reply(int status, JsonNode body) {
    boolean allowed() {
      return body.get("allowed").asBoolean();
    }

    boolean degraded() {
      return body.get("degraded").asBoolean();
    }
  }

  Reply decide(String json) {
    return send("POST", "/v1/decisions", json, Map.of());
  }

  Reply get(String path) {
    return send("GET", path, null, Map.of());
  }

  /** The body of a GET as text ({@code /metrics}). */
  String text(String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
          .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  Reply send(String method, String path, String body, Map<String, String> headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .timeout(Duration.ofSeconds(20))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    headers.forEach(b::header);
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      String type = r.headers().firstValue("content-type").orElse("");
      return new Reply(r.statusCode(), type.contains("json") ? JSON.readTree(r.body()) : null);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    server.close();
  }
}
