package dev.fcap.server;

import dev.fcap.store.ForwardingStore;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import java.util.concurrent.CompletableFuture;

/**
 * A real store that fails on demand: {@link Mode#DOWN} fails every call as unreachable,
 * {@link Mode#HANG} never answers (the server's timeout must bound it), {@link Mode#FULL} refuses as
 * full. Stands in for a stopped Redis until the Redis store's own test does it for real.
 */
final class FlakyStore extends ForwardingStore {
  enum Mode { UP, DOWN, HANG, FULL }

  volatile Mode mode = Mode.UP;
  /** Counted down by every call made while hanging, so a test knows a request is in flight. */
  volatile java.util.concurrent.CountDownLatch hanging = new java.util.concurrent.CountDownLatch(1);

  FlakyStore(Store delegate) {
    super(delegate);
  }

  private <T> CompletableFuture<T> guard(java.util.function.Supplier<CompletableFuture<T>> call) {
    return switch (mode) {
      case UP -> call.get();
      case DOWN -> CompletableFuture.failedFuture(new StoreException(StoreException.Reason.UNAVAILABLE,
          "connection refused (test)"));
      case FULL -> CompletableFuture.failedFuture(new StoreException(StoreException.Reason.FULL, "full (test)"));
      case HANG -> {
        hanging.countDown();
        yield new CompletableFuture<>();
      }
    };
  }

  @Override
  public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
    return guard(() -> super.apply(request));
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    return guard(() -> super.read(partition));
  }

  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    return guard(() -> super.delete(partition));
  }
}
