package dev.fcap.server.metrics;

import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/** A {@link Store} that times every call ({@code fcap_store_seconds{op}}) and counts failures by reason. */
public final class MeteredStore implements Store {
  private final Store delegate;
  private final ServerMetrics metrics;
  private final Timer apply;
  private final Timer applyAll;
  private final Timer read;
  private final Timer delete;

  public MeteredStore(Store delegate, ServerMetrics metrics) {
    this.delegate = delegate;
    this.metrics = metrics;
    this.apply = metrics.storeTimer("apply");
    this.applyAll = metrics.storeTimer("apply_all");
    this.read = metrics.storeTimer("read");
    this.delete = metrics.storeTimer("delete");
  }

  public Store delegate() {
    return delegate;
  }

  @Override
  public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
    return timed(apply, () -> delegate.apply(request));
  }

  @Override
  public CompletableFuture<List<PartitionResult>> applyAll(List<PartitionRequest> requests) {
    return timed(applyAll, () -> delegate.applyAll(requests));
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    return timed(read, () -> delegate.read(partition));
  }

  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    return timed(delete, () -> delegate.delete(partition));
  }

  @Override
  public void advanceCallerTimeFloor(long time) {
    delegate.advanceCallerTimeFloor(time);
  }

  @Override
  public long now() {
    return delegate.now();
  }

  @Override
  public void close() {
    delegate.close();
  }

  private <T> CompletableFuture<T> timed(Timer timer, java.util.function.Supplier<CompletableFuture<T>> call) {
    long start = System.nanoTime();
    CompletableFuture<T> f;
    try {
      f = call.get();
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    return f.whenComplete((v, error) -> {
      timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      if (error != null) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        metrics.storeError(cause instanceof StoreException se ? se.reason().name().toLowerCase(java.util.Locale.ROOT)
            : "other");
      }
    });
  }
}
