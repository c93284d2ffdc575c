package dev.fcap.store.redis;

import dev.fcap.uri.Redaction;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The one place fcap turns a Redis URI into Lettuce's connection settings, for the store
 * ({@link RedisStore}) and for everything else that talks to Redis (the server's rules source and
 * audit stream). {@code redis://}, {@code rediss://} and {@code redis-sentinel://} are Lettuce's own
 * formats; {@code redis-cluster://} and {@code rediss-cluster://} list seed nodes, comma-separated,
 * with optional credentials and no database. Messages never carry a password ({@code Redaction}).
 */
public final class RedisUris {

  /** A parsed URI: a cluster's seed nodes, or the one standalone or Sentinel URI. */
  public record Target(boolean cluster, List<RedisURI> nodes) {}

  private RedisUris() {}

  /**
   * Parses a store URI.
   *
   * @throws IllegalArgumentException saying what is wrong, with any password redacted
   */
  public static Target parse(String uri) {
    int colon = uri.indexOf("://");
    if (colon < 0) {
      throw bad(uri, "expected scheme://, e.g. redis://localhost:6379");
    }
    String scheme = uri.substring(0, colon);
    switch (scheme) {
      case "redis", "rediss", "redis-sentinel", "rediss-sentinel" -> {
        try {
          return new Target(false, List.of(RedisURI.create(escapeUserInfo(uri))));
        } catch (NumberFormatException e) {
          throw bad(uri, "its port or database is not a number (redis://[user:password@]host:port[/database])");
        } catch (RuntimeException e) {
          throw bad(uri, "not a valid URI (" + e.getMessage() + ")");
        }
      }
      case "redis-cluster", "rediss-cluster" -> {
        return new Target(true, cluster(uri, scheme.startsWith("rediss"), uri.substring(colon + 3)));
      }
      default -> throw bad(uri, "unknown scheme '" + scheme
          + "'; use redis://, rediss://, redis-sentinel:// or redis-cluster://");
    }
  }

  /**
   * {@code uri} with its user info percent-encoded where a URI parser would otherwise end it early.
   * Passwords are written raw (they may hold {@code / ? # @}, see {@code Redaction}); Lettuce reads
   * the URI with {@code java.net.URI}, which would take {@code hunt/er2@h:1} as the port
   * {@code hunt} and a path. Escapes already written ({@code %40}) are kept, since Lettuce decodes them.
   */
  static String escapeUserInfo(String uri) {
    int start = uri.indexOf("://") + 3;
    int at = uri.lastIndexOf('@');
    if (at < start) {
      return uri;
    }
    StringBuilder out = new StringBuilder(uri.length() + 8).append(uri, 0, start);
    String info = uri.substring(start, at);
    for (int i = 0; i < info.length(); i += Character.charCount(info.codePointAt(i))) {
      int c = info.codePointAt(i);
      if (c == '%' && i + 2 < info.length() && isHex(info.charAt(i + 1)) && isHex(info.charAt(i + 2))) {
        out.append('%');
      } else if (c < 0x80 && USER_INFO_SAFE.indexOf(c) >= 0) {
        out.append((char) c);
      } else {
        for (byte b : Character.toString(c).getBytes(StandardCharsets.UTF_8)) {
          out.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xF, 16)))
              .append(Character.toUpperCase(Character.forDigit(b & 0xF, 16)));
        }
      }
    }
    return out.append(uri.substring(at)).toString();
  }

  /** RFC 3986 user info characters that need no escape: unreserved, sub-delims and {@code :}. */
  private static final String USER_INFO_SAFE =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:";

  private static boolean isHex(char c) {
    return Character.digit(c, 16) >= 0;
  }

  private static List<RedisURI> cluster(String uri, boolean ssl, String rest) {
    String user = null;
    char[] password = null;
    int at = rest.lastIndexOf('@');
    if (at >= 0) {
      String info = rest.substring(0, at);
      rest = rest.substring(at + 1);
      int c = info.indexOf(':');
      String u = c < 0 ? "" : decode(info.substring(0, c));
      password = decode(c < 0 ? info : info.substring(c + 1)).toCharArray();
      user = u.isEmpty() ? null : u;
    }
    int end = rest.length();
    for (char stop : new char[] {'/', '?', '#'}) {
      int i = rest.indexOf(stop);
      if (i >= 0) {
        end = Math.min(end, i);
      }
    }
    String tail = rest.substring(end);
    if (!tail.isEmpty() && !tail.equals("/") && !tail.equals("/0")) {
      throw bad(uri, "a cluster URI takes no database, query or fragment: '" + tail + "'");
    }
    List<RedisURI> nodes = new ArrayList<>();
    for (String hostPort : rest.substring(0, end).split(",")) {
      if (hostPort.isBlank()) {
        throw bad(uri, "empty host in the node list");
      }
      int c = hostPort.lastIndexOf(':');
      String host = c < 0 ? hostPort : hostPort.substring(0, c);
      int port = 6379;
      if (c >= 0) {
        try {
          port = Integer.parseInt(hostPort.substring(c + 1));
        } catch (NumberFormatException e) {
          throw bad(uri, "bad port in '" + hostPort + "'");
        }
      }
      if (host.isEmpty() || port < 1 || port > 65535) {
        throw bad(uri, "bad node '" + hostPort + "'");
      }
      RedisURI.Builder b = RedisURI.builder().withHost(host).withPort(port).withSsl(ssl);
      if (password != null) {
        if (user != null) {
          b.withAuthentication(user, password);
        } else {
          b.withPassword(password);
        }
      }
      nodes.add(b.build());
    }
    return nodes;
  }

  /**
   * How long a lost connection waits at most between two reconnect attempts. Lettuce's default backs
   * off to 30 s: a connection that kept failing through a Sentinel failover (its reconnects asked the
   * sentinels, who still named the dead master) then found the promoted master only up to 30 s after
   * the promotion. Capped at 1 s, a client follows a failover within about a second of it; the cost
   * is one connection attempt per second per connection while Redis is down.
   */
  public static final Duration RECONNECT_CAP = Duration.ofSeconds(1);

  /** Exponential from 10 ms, with jitter, never more than {@link #RECONNECT_CAP}. */
  static Delay reconnectDelay() {
    return Delay.equalJitter(Duration.ofMillis(10), RECONNECT_CAP, 2, TimeUnit.MILLISECONDS);
  }

  /**
   * New client resources for one fcap client (pass them to {@code RedisClient.create}): Lettuce's
   * defaults but the capped reconnect delay and no command latency recorder. A client leaves resources
   * it was given running: close it with {@link #shutdown}.
   *
   * <p>Lettuce records every command's latency when HdrHistogram and LatencyUtils are on the class path
   * (Micrometer brings both): a wrapper, an id and a callback per command, and a histogram update on
   * the event loop that also reads every reply. Nothing reads those histograms; fcap times its store
   * calls itself ({@code fcap_store_seconds}). They were about 5 % of what RedisStoreBench's client
   * allocated (docs/benchmarks.md, "Latency at half load").
   *
   * <p>Each connection's flushes are consolidated ({@link FlushConsolidationHandler}): a command sent
   * from another thread is written by a task on the connection's event loop, and without it every
   * such task ends in its own write to the socket, which Redis then reads and answers alone, paying
   * a read and a write system call per command. Consolidated, the commands that many threads send
   * at once go out in one write, flushed once the event loop has written all that was queued: Redis
   * reads them together, as a pipeline (docs/benchmarks.md, "The deployed path").
   */
  public static ClientResources resources() {
    return resources(Duration.ZERO);
  }

  /**
   * {@link #resources()}, but where {@code flushDelay} is positive a connection's flushes are held
   * for up to that long instead ({@link GatheredFlushes}): commands sent one by one within it reach
   * Redis together, each waiting at most that long.
   */
  public static ClientResources resources(Duration flushDelay) {
    long delayNanos = flushDelay.toNanos();
    return DefaultClientResources.builder().reconnectDelay(RedisUris::reconnectDelay)
        .commandLatencyRecorder(CommandLatencyRecorder.disabled())
        .nettyCustomizer(new NettyCustomizer() {
          @Override
          public void afterChannelInitialized(Channel channel) {
            channel.pipeline().addFirst(delayNanos > 0 ? new GatheredFlushes(delayNanos)
                : new FlushConsolidationHandler(FLUSH_AFTER_WRITES, true));
          }
        }).build();
  }

  /** The most commands a consolidated flush holds back: a write of about this many is never delayed. */
  private static final int FLUSH_AFTER_WRITES = 256;

  /** Shuts {@code client} down, then the resources {@link #resources()} gave it. */
  public static void shutdown(AbstractRedisClient client, Duration quietPeriod, Duration timeout) {
    try {
      client.shutdown(quietPeriod, timeout);
    } finally {
      client.getResources().shutdown(quietPeriod.toMillis(), timeout.toMillis(), TimeUnit.MILLISECONDS)
          .awaitUninterruptibly();
    }
  }

  /** {@link #shutdown(AbstractRedisClient, Duration, Duration)} as Lettuce's own {@code shutdown()}: 2 s at most. */
  public static void shutdown(AbstractRedisClient client) {
    shutdown(client, Duration.ZERO, Duration.ofSeconds(2));
  }

  /**
   * The options every fcap connection uses: reconnect, refuse commands while disconnected (a caller
   * waits at most its own deadline, never for a reconnect), a command timeout, keep-alive.
   */
  public static ClientOptions clientOptions(Duration commandTimeout, Duration connectTimeout) {
    return ClientOptions.builder().autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .timeoutOptions(TimeoutOptions.enabled(commandTimeout)).socketOptions(socket(connectTimeout)).build();
  }

  /** {@link #clientOptions} for a cluster client, to which a caller may add cluster settings. */
  public static ClusterClientOptions.Builder clusterOptions(Duration commandTimeout, Duration connectTimeout) {
    return ClusterClientOptions.builder().autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .timeoutOptions(TimeoutOptions.enabled(commandTimeout)).socketOptions(socket(connectTimeout));
  }

  private static SocketOptions socket(Duration connectTimeout) {
    return SocketOptions.builder().connectTimeout(connectTimeout).keepAlive(true).build();
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }

  /** Lettuce's own message may quote the URI, password included: both are scrubbed. */
  private static IllegalArgumentException bad(String uri, String why) {
    return new IllegalArgumentException("invalid Redis store URI '" + Redaction.uri(uri) + "': " + Redaction.scrub(why, uri));
  }
}
