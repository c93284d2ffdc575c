package dev.fcap.server.metrics;

import dev.fcap.store.ForwardingStore;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A {@link Store} decorator that times every call ({@code fcap_store_seconds{op}}) and counts failures
 * by reason. Outermost in the server's chain, so it times what the engine waits for, fallbacks
 * included: {@code store.decorate(FailoverStore.newDecorator(...)).decorate(MeteredStore.newDecorator(metrics))}.
 */
public final class MeteredStore extends ForwardingStore {
  private final ServerMetrics metrics;
  private final Timer apply;
  private final Timer applyAll;
  private final Timer read;
  private final Timer delete;

  MeteredStore(Store delegate, ServerMetrics metrics) {
    super(delegate);
    this.metrics = metrics;
    this.apply = metrics.storeTimer("apply");
    this.applyAll = metrics.storeTimer("apply_all");
    this.read = metrics.storeTimer("read");
    this.delete = metrics.storeTimer("delete");
  }

  /** Decorates a store with the metrics of {@code metrics}. */
  public static Function<Store, MeteredStore> newDecorator(ServerMetrics metrics) {
    return store -> new MeteredStore(store, metrics);
  }

  @Override
  public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
    return timed(apply, () -> super.apply(request));
  }

  /** Times the batch until its last request completes; counts each failed request. */
  @Override
  public List<CompletableFuture<PartitionResult>> applyAll(List<PartitionRequest> requests) {
    long start = System.nanoTime();
    List<CompletableFuture<PartitionResult>> results = delegate().applyAll(requests);
    for (CompletableFuture<PartitionResult> r : results) {
      r.whenComplete((v, error) -> failed(error));
    }
    CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
        .whenComplete((v, error) -> applyAll.record(System.nanoTime() - start, TimeUnit.NANOSECONDS));
    return results;
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    return timed(read, () -> super.read(partition));
  }

  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    return timed(delete, () -> super.delete(partition));
  }

  private <T> CompletableFuture<T> timed(Timer timer, Supplier<CompletableFuture<T>> call) {
    long start = System.nanoTime();
    CompletableFuture<T> f;
    try {
      f = call.get();
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    return f.whenComplete((v, error) -> {
      timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      failed(error);
    });
  }

  private void failed(Throwable error) {
    if (error != null) {
      Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
      metrics.storeError(cause instanceof StoreException se ? se.reason().name().toLowerCase(Locale.ROOT) : "other");
    }
  }
}
