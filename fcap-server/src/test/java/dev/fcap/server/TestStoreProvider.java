package dev.fcap.server;

import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.time.Clock;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/** A store provider found through ServiceLoader, as fcap-redis will be: handles {@code test-memory://}. */
public final class TestStoreProvider implements StoreProvider {
  static final AtomicInteger OPENED = new AtomicInteger();

  @Override
  public Optional<Store> open(String uri, Clock clock, ServerConfig config) {
    if (!uri.startsWith("test-memory://")) {
      return Optional.empty();
    }
    OPENED.incrementAndGet();
    return Optional.of(MemoryStore.builder().clock(clock).build());
  }
}
