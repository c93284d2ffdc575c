package dev.fcap.server.redis;

import dev.fcap.server.ServerConfig;
import dev.fcap.server.StoreProvider;
import dev.fcap.server.admin.RulesSource;
import dev.fcap.server.audit.AuditSink;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.time.Clock;
import io.lettuce.core.RedisException;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * Redis for the fcap server, found by {@link java.util.ServiceLoader}:
 *
 * <ul>
 *   <li>{@code store.uri}: {@code redis://}, {@code rediss://}, {@code redis-sentinel://},
 *       {@code redis-cluster://} (and the TLS variants): a {@link RedisStore} whose command timeout is
 *       {@link #clientTimeout} of {@code store.timeout}: longer than the server's deadline per call, so
 *       that a late answer is still seen (and a late admission released) rather than dropped;
 *       optional {@code ?replicaAcks=N&replicaAckTimeout=100ms} answers a writing call only once N
 *       replicas have it (Redis WAIT, standalone and Sentinel; docs/redis.md); optional {@code ?prefix=NAME:} namespaces its keys (default {@code fc:}); optional {@code ?groups=N}
 *       keeps the partitions as fields of N hashes instead of a key each (about half the Redis memory of
 *       a recipient, for about 8 % more Redis CPU per decision; docs/redis.md, "Several partitions per key").
 *       Decisions use Redis {@code TIME}; the server's clock is the local clock the store's
 *       {@code now()} adds the observed offset to.
 *   <li>{@code rules.source}: the same URIs with optional {@code ?key=NAME} (default
 *       {@code fcap:rules}): a {@link RedisRulesSource}, seeded from {@code rules.seed}, history bounded by
 *       {@code rules.history}.
 *   <li>{@code audit.sink}: the same URIs with optional {@code ?stream=NAME} (default {@code fcap:audit})
 *       and {@code ?maxlen=N} (default 1,000,000): a {@link RedisAuditSink}.
 * </ul>
 *
 * The rules source and the audit sink have their own connections (so a slow audit batch never
 * queues ahead of a decision), with a {@link #SIDE_TIMEOUT} command timeout: neither is on a
 * decision's path.
 */
public final class RedisStoreProvider implements StoreProvider {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RedisStoreProvider.class);
  /** Command timeout of the rules source and the audit sink. */
  static final Duration SIDE_TIMEOUT = Duration.ofSeconds(2);
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
  static final long DEFAULT_MAXLEN = 1_000_000;

  /** Lettuce's command timeout for a server deadline of {@code deadline}: ten times it, at least 2 s. */
  static Duration clientTimeout(Duration deadline) {
    Duration tenfold = deadline.multipliedBy(10);
    return tenfold.compareTo(Duration.ofSeconds(2)) < 0 ? Duration.ofSeconds(2) : tenfold;
  }

  @Override
  public Optional<Store> open(String uri, Clock clock, ServerConfig config) {
    if (!RedisEndpoint.handles(uri)) {
      return Optional.empty();
    }
    RedisEndpoint e = RedisEndpoint.parse("store.uri", uri, Set.of("prefix", "replicaAcks", "replicaAckTimeout", "groups",
        "flushDelayMicros"));
    RedisStore.Builder b = RedisStore.builder(e.uri()).commandTimeout(clientTimeout(config.failure().timeout()))
        .connectTimeout(CONNECT_TIMEOUT).localClock(clock);
    int acks = (int) e.longParam("replicaAcks", 0, 0);
    if (acks > 0) {
      String text = e.param("replicaAckTimeout", "100ms");
      Duration ackTimeout = dev.fcap.policy.Durations.parse(text).orElseThrow(() -> new IllegalArgumentException(
          "store.uri: replicaAckTimeout must be a duration such as 100ms, got '" + text + "'"));
      try {
        b.replicaAcks(acks, ackTimeout);
      } catch (IllegalArgumentException bad) {
        throw new IllegalArgumentException("store.uri: " + bad.getMessage(), bad);
      }
    }
    long groups = e.longParam("groups", 0, 0);
    if (groups > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("store.uri: groups must be at most " + Integer.MAX_VALUE + ", got " + groups);
    }
    b.groups((int) groups);
    long flushDelay = e.longParam("flushDelayMicros", 0, 0);
    Duration maxFlushDelay = RedisStore.Builder.MAX_FLUSH_DELAY;
    if (flushDelay > maxFlushDelay.toNanos() / 1000) {
      throw new IllegalArgumentException("store.uri: flushDelayMicros must be at most " + maxFlushDelay.toNanos() / 1000
          + " (" + maxFlushDelay.toMillis() + " ms), got " + flushDelay);
    }
    b.flushDelay(Duration.ofNanos(1000 * flushDelay));
    try {
      b.keyPrefix(e.param("prefix", "fc:"));
    } catch (IllegalArgumentException bad) {
      throw new IllegalArgumentException("store.uri: prefix: " + e.scrub(bad.getMessage()));
    }
    RedisStore store;
    try {
      store = b.build();
    } catch (StoreException failed) {
      throw new StoreException(failed.reason(), "store.uri: cannot open the Redis store at " + e.redacted() + ": "
          + e.scrub(failed.getMessage()), failed);
    }
    if (groups > 0) {
      try (RedisEndpoint.Link link = e.connect(SIDE_TIMEOUT, CONNECT_TIMEOUT)) {
        listpackWarning(link).ifPresent(LOG::warn);
      } catch (RuntimeException unreachable) {
        // the store itself just connected: a failure here only skips the advice
      }
    }
    return Optional.of(store);
  }

  /** The least {@code hash-max-listpack-value} at which the grouped layout's hashes stay listpacks. */
  static final long LISTPACK_VALUE = 512;

  /**
   * The grouped layout saves memory only while its hashes stay listpacks, which needs Redis's
   * {@code hash-max-listpack-value} at least {@link #LISTPACK_VALUE} (docs/redis.md, "Several partitions
   * per key"; decisions are right either way): advice if this Redis says less, nothing if it cannot
   * say (CONFIG refused, as on some managed services).
   */
  static Optional<String> listpackWarning(RedisEndpoint.Link link) {
    String value;
    try {
      value = link.sync().configGet("hash-max-listpack-value").get("hash-max-listpack-value");
    } catch (RuntimeException refused) {
      return Optional.empty();
    }
    if (value == null || Long.parseLong(value.trim()) >= LISTPACK_VALUE) {
      return Optional.empty();
    }
    return Optional.of("store.uri: groups: this Redis has hash-max-listpack-value " + value + ", below fcap's values: the "
        + "groups become hash tables and save about a third of the memory instead of half. Set it to " + LISTPACK_VALUE
        + " (CONFIG SET hash-max-listpack-value " + LISTPACK_VALUE + ", and in redis.conf)");
  }

  @Override
  public Optional<RulesSource> rulesSource(String uri, ServerConfig config) throws IOException {
    if (!RedisEndpoint.handles(uri)) {
      return Optional.empty();
    }
    RedisEndpoint e = RedisEndpoint.parse("rules.source", uri, Set.of("key"));
    String name = e.param("key", "fcap:rules");
    RedisEndpoint.Link link = connect(e, "rules.source");
    try {
      return Optional.of(new RedisRulesSource(e, link, name, config.rulesSeed(), config.rulesHistory()));
    } catch (RuntimeException bad) {
      link.close();
      throw bad;
    }
  }

  @Override
  public Optional<AuditSink> auditSink(String uri, ServerConfig config) throws IOException {
    if (!RedisEndpoint.handles(uri)) {
      return Optional.empty();
    }
    RedisEndpoint e = RedisEndpoint.parse("audit.sink", uri, Set.of("stream", "maxlen"));
    long maxLen = e.longParam("maxlen", DEFAULT_MAXLEN, 1);
    String stream = e.param("stream", "fcap:audit");
    return Optional.of(new RedisAuditSink(e, connect(e, "audit.sink"), stream, maxLen, SIDE_TIMEOUT.toMillis()));
  }

  private static RedisEndpoint.Link connect(RedisEndpoint e, String setting) throws IOException {
    try {
      return e.connect(SIDE_TIMEOUT, CONNECT_TIMEOUT);
    } catch (RedisException failed) {
      throw new IOException(setting + ": cannot connect to Redis at " + e.redacted() + ": " + e.scrub(failed.getMessage()),
          failed);
    }
  }
}
