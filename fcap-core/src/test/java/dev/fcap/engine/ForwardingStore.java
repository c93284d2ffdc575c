package dev.fcap.engine;

import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import java.util.concurrent.CompletableFuture;

/** A store that forwards every call to another: tests override {@link #apply} to watch or fail calls. */
class ForwardingStore implements Store {
  final Store store;

  ForwardingStore(Store store) {
    this.store = store;
  }

  @Override
  public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
    return store.apply(request);
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    return store.read(partition);
  }

  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    return store.delete(partition);
  }

  @Override
  public long now() {
    return store.now();
  }
}
