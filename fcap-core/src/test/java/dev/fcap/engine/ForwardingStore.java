package dev.fcap.engine;

import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import java.util.concurrent.CompletableFuture;

/**
 * A store that forwards every call to another, and answers only through {@link #apply}'s futures (no
 * {@code applyInto}), as a decorator does: tests override {@link #apply} to watch or fail calls, or
 * use it as it is to keep the engine on that path.
 */
public class ForwardingStore implements Store {
  final Store store;

  public ForwardingStore(Store store) {
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
  public void advanceCallerTimeFloor(long time) {
    store.advanceCallerTimeFloor(time);
  }

  @Override
  public long now() {
    return store.now();
  }

  @Override
  public void close() {
    store.close();
  }
}
