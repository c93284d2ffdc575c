package dev.fcap.store.memory;

import dev.fcap.store.ManualClock;
import dev.fcap.store.Store;
import dev.fcap.store.StoreContract;

/** The store test kit against the embedded store. */
class MemoryStoreTest extends StoreContract {
  @Override
  protected Store newStore(ManualClock clock) {
    return MemoryStore.builder().clock(clock).maxBytes(64 << 20).segments(4).build();
  }
}
