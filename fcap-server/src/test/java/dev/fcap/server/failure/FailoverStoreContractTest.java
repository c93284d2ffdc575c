package dev.fcap.server.failure;

import dev.fcap.server.metrics.MeteredStore;
import dev.fcap.server.metrics.ServerMetrics;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Store;
import dev.fcap.store.StoreContract;
import dev.fcap.store.memory.MemoryStore;

/** The store test kit on the server's chain: metered, then failover, then the embedded store. */
class FailoverStoreContractTest extends StoreContract {
  @Override
  protected Store newStore(ManualClock clock) {
    return MemoryStore.builder().clock(clock).maxBytes(64 << 20).segments(4).build()
        .decorate(FailoverStore.newDecorator(FailurePolicy.defaults(), clock, new ManualScheduler(clock)))
        .decorate(MeteredStore.newDecorator(new ServerMetrics()));
  }
}
