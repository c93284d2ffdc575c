package dev.fcap.server;

import dev.fcap.server.admin.RulesSource;
import dev.fcap.server.audit.AuditSink;
import dev.fcap.store.Store;
import dev.fcap.time.Clock;
import java.io.IOException;
import java.util.Optional;

/**
 * Plugs a storage backend into the server: its {@link Store} for {@code store.uri}, and optionally a
 * shared {@link RulesSource} for {@code rules.source} and an {@link AuditSink} for {@code audit.sink}.
 * The server finds providers with {@link java.util.ServiceLoader}, so a module (fcap-redis:
 * {@code redis://}, {@code redis-sentinel://}, {@code redis-cluster://}; rules in a Redis key with
 * change notification; audit to a Redis Stream) plugs in by being on the class path with a
 * {@code META-INF/services/dev.fcap.server.StoreProvider} entry: the server does not depend on it.
 * Built in: the {@code memory} store, file rules and file audit.
 *
 * <p>One provider per backend, not one per role, on purpose: a backend that holds the counters (Redis) is
 * where a shared rules source and an audit stream live too, with the same URIs, and one service entry
 * plugs in all three.
 */
public interface StoreProvider {

  /** The store for {@code uri}, or empty if this provider does not handle the URI's scheme. */
  Optional<Store> open(String uri, Clock clock, ServerConfig config);

  /** A rules source for {@code uri}, or empty if not handled. */
  default Optional<RulesSource> rulesSource(String uri, ServerConfig config) throws IOException {
    return Optional.empty();
  }

  /** An audit sink for {@code uri}, or empty if not handled. */
  default Optional<AuditSink> auditSink(String uri, ServerConfig config) throws IOException {
    return Optional.empty();
  }
}
