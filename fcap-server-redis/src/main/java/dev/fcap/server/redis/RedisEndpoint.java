package dev.fcap.server.redis;

import dev.fcap.store.redis.RedisUris;
import dev.fcap.uri.Redaction;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.StringCodec;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Redis URI as the server's settings write it, split into what Redis needs (the URI RedisStore or
 * Lettuce understands) and fcap's own query parameters ({@code key}, {@code stream}, {@code maxlen},
 * {@code prefix}), which are taken out before the URI reaches Lettuce.
 *
 * <p>Schemes: {@code redis}, {@code rediss}, {@code redis-sentinel}, {@code rediss-sentinel} (Lettuce's
 * own formats) and {@code redis-cluster}, {@code rediss-cluster} (comma-separated seed nodes, as
 * RedisStore reads them).
 */
final class RedisEndpoint {
  static final Set<String> SCHEMES = Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-cluster",
      "rediss-cluster");

  private final String setting;
  private final String uri;
  private final Map<String, String> params;

  private RedisEndpoint(String setting, String uri, Map<String, String> params) {
    this.setting = setting;
    this.uri = uri;
    this.params = params;
  }

  /** True if {@code uri} has one of the Redis schemes. */
  static boolean handles(String uri) {
    int i = uri.indexOf("://");
    return i > 0 && SCHEMES.contains(uri.substring(0, i));
  }

  /**
   * Splits {@code raw}, the value of {@code setting}, keeping only the fcap parameters in {@code allowed}.
   *
   * @throws IllegalArgumentException naming the setting, for a parameter this setting does not take
   */
  static RedisEndpoint parse(String setting, String raw, Set<String> allowed) {
    int from = Math.max(raw.indexOf("://") + 3, raw.lastIndexOf('@') + 1); // a raw password may hold ? and #
    int q = raw.indexOf('?', from);
    if (q < 0) {
      return new RedisEndpoint(setting, raw, Map.of());
    }
    int hash = raw.indexOf('#', q);
    String query = raw.substring(q + 1, hash < 0 ? raw.length() : hash);
    Map<String, String> ours = new LinkedHashMap<>();
    List<String> rest = new ArrayList<>();
    for (String pair : query.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      if (allowed.contains(name)) {
        if (value.isEmpty()) {
          throw new IllegalArgumentException(setting + ": the parameter '" + name + "' needs a value, e.g. "
              + name + "=...");
        }
        ours.put(name, value);
      } else if (Set.of("key", "stream", "maxlen", "prefix").contains(name)) {
        throw new IllegalArgumentException(setting + ": '" + name + "' is not a parameter of this setting"
            + (allowed.isEmpty() ? "" : " (it takes " + String.join(", ", allowed) + ")"));
      } else {
        rest.add(pair);
      }
    }
    String clean = raw.substring(0, q) + (rest.isEmpty() ? "" : "?" + String.join("&", rest))
        + (hash < 0 ? "" : raw.substring(hash));
    return new RedisEndpoint(setting, clean, Map.copyOf(ours));
  }

  /** The URI without fcap's parameters. */
  String uri() {
    return uri;
  }

  String param(String name, String otherwise) {
    return params.getOrDefault(name, otherwise);
  }

  long longParam(String name, long otherwise, long min) {
    String v = params.get(name);
    if (v == null) {
      return otherwise;
    }
    try {
      long n = Long.parseLong(v);
      if (n < min) {
        throw new IllegalArgumentException(setting + ": " + name + " must be at least " + min + ", got " + n);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(setting + ": " + name + " must be an integer, got '" + v + "'");
    }
  }

  /** The URI with any password hidden, for logs and messages. */
  String redacted() {
    return Redaction.uri(uri);
  }

  /** {@code text} (e.g. a client's exception message) without this URI's password. */
  String scrub(String text) {
    return Redaction.scrub(text, uri);
  }

  /** Opens a String-keyed connection: a standalone or Sentinel-managed master, or a cluster. */
  Link connect(Duration commandTimeout, Duration connectTimeout) {
    RedisUris.Target target;
    try {
      target = RedisUris.parse(uri);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(setting + ": " + e.getMessage()); // already redacted
    }
    target.nodes().forEach(n -> n.setTimeout(connectTimeout));
    if (target.cluster()) {
      RedisClusterClient client = RedisClusterClient.create(RedisUris.resources(), target.nodes());
      client.setOptions(RedisUris.clusterOptions(commandTimeout, connectTimeout).build());
      try {
        StatefulRedisClusterConnection<String, String> c = client.connect(StringCodec.UTF8);
        return new Link(client, c, c.sync(), c.async());
      } catch (RuntimeException e) {
        RedisUris.shutdown(client);
        throw e;
      }
    }
    RedisClient client = RedisClient.create(RedisUris.resources());
    client.setOptions(RedisUris.clientOptions(commandTimeout, connectTimeout));
    try {
      StatefulRedisConnection<String, String> c = client.connect(StringCodec.UTF8, target.nodes().get(0));
      return new Link(client, c, c.sync(), c.async());
    } catch (RuntimeException e) {
      RedisUris.shutdown(client);
      throw e;
    }
  }

  /** An open connection: sync and async commands over one connection, closed with its client. */
  record Link(AbstractRedisClient client, StatefulConnection<String, String> connection,
      RedisClusterCommands<String, String> sync, RedisClusterAsyncCommands<String, String> async)
      implements AutoCloseable {
    @Override
    public void close() {
      connection.close();
      RedisUris.shutdown(client, Duration.ZERO, Duration.ofSeconds(2));
    }
  }
}
