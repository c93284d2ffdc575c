package dev.fcap.store.memory;

import dev.fcap.store.ManualClock;
import dev.fcap.store.Store;
import dev.fcap.store.StoreContract;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The store test kit against the durable embedded store, syncing every write (the future path). */
class DurableMemoryStoreTest extends StoreContract {
  @Override
  protected Store newStore(ManualClock clock) {
    try {
      Path dir = Files.createTempDirectory("fcap-durable-kit");
      dir.toFile().deleteOnExit();
      return MemoryStore.builder().clock(clock).maxBytes(64 << 20).segments(4).durable(Durability.everyWrite(dir)).build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
