package dev.fcap.server;

import dev.fcap.store.Clock;
import dev.fcap.store.Store;
import java.util.Optional;

/**
 * Opens a {@link Store} for a {@code store.uri}. The server finds providers with
 * {@link java.util.ServiceLoader}, so a store module (fcap-redis: {@code redis://},
 * {@code redis-sentinel://}, {@code redis-cluster://}) plugs in by being on the class path with a
 * {@code META-INF/services/dev.fcap.server.StoreProvider} entry; the server does not depend on it.
 * {@code memory} is built in.
 */
public interface StoreProvider {

  /** The store for {@code uri}, or empty if this provider does not handle the URI's scheme. */
  Optional<Store> open(String uri, Clock clock, ServerConfig config);
}
