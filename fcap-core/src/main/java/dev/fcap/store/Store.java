package dev.fcap.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Where counters live. A store knows no rules: only partitions of counters, each counter with an
 * algorithm, its checks and an operation. Every {@link #apply} is one atomic step over its partition:
 * either every enforced check admits and the message is recorded in every counter, or nothing is
 * recorded. Futures fail with {@link StoreException}.
 *
 * <p>Implementations: {@code MemoryStore} (embedded) and {@code RedisStore} (module fcap-redis).
 * Both must pass the store test kit ({@code StoreContract} in fcap-core's test jar).
 *
 * <p><b>Decorators</b> (metrics, failover) wrap a store and are stores themselves; each extends
 * {@link ForwardingStore}, so that it passes on every method it does not override. Build the chain
 * inside out with {@link #decorate}, the last decorator outermost, and find a layer with {@link #as}:
 * {@code redis.decorate(FailoverStore.newDecorator(...)).decorate(MeteredStore.newDecorator(...))}.
 */
public interface Store extends AutoCloseable {

  /** Applies one operation to one partition, atomically. */
  CompletableFuture<PartitionResult> apply(PartitionRequest request);

  /**
   * {@link #apply} on the calling thread, for a store that can answer there (the embedded one): reads
   * {@code request} (what {@link ReusableRequest#toRequest()} would be) and writes what
   * {@code apply}'s future would complete with into {@code out}, both owned and reused by the caller,
   * and returns true, so a decision allocates no request, result, arrays or future. The store keeps
   * nothing of {@code request}: the caller may reuse its key arrays once this returns. Returns false, with
   * nothing done, when this store cannot answer on the calling thread (over a network, behind a
   * decorator, or waiting for a write's sync): the caller then calls {@link #apply}. The default
   * returns false; a decorator that does not override it keeps every request on {@link #apply}.
   *
   * @throws StoreException where {@code apply}'s future would fail with it
   */
  default boolean applyInto(ReusableRequest request, ReusableResult out) {
    return false;
  }

  /**
   * Whether {@link #applyInto} answers on the calling thread: true only for a store that overrides it
   * and can (the embedded one, unless it syncs every write). It depends on the store's kind and
   * settings alone, so a caller asks once, and builds its requests where they will be read: in
   * buffers it reuses for such a store, in arrays of their own for one that may keep them.
   */
  default boolean answersOnCallingThread() {
    return false;
  }

  /**
   * Applies many requests; each is atomic on its own and completes on its own (one future per
   * request, in request order), so one refused or failed request never fails the others. Stores that
   * talk over a network pipeline them.
   */
  default List<CompletableFuture<PartitionResult>> applyAll(List<PartitionRequest> requests) {
    List<CompletableFuture<PartitionResult>> futures = new ArrayList<>(requests.size());
    for (PartitionRequest r : requests) {
      futures.add(apply(r));
    }
    return futures;
  }

  /** The counters of a partition that still matter at the store's time, for inspection. */
  CompletableFuture<PartitionSnapshot> read(byte[] partition);

  /** Forgets a partition; completes with whether it held anything. */
  CompletableFuture<Boolean> delete(byte[] partition);

  /**
   * Promises that no later request carries a caller-supplied time (a {@link PartitionRequest#time()}
   * other than {@link PartitionRequest#STORE_TIME}) below {@code time}, so the store may forget
   * counters of other partitions that expired by then. Caller times are not monotonic across callers
   * (a replay decides on several threads, each at its own row's time), so without this promise a
   * store never drops a counter by one caller's time while another may still need it. Monotonic: a
   * lower value than before is ignored. Decorators pass it on.
   */
  default void advanceCallerTimeFloor(long time) {}

  /**
   * A hint: this thread is about to decide on {@code partitions[0, n)} (null entries: none), one
   * after the other. A store that holds its partitions in this process may read where they lie, all
   * at once, so that their cache misses overlap instead of each decision waiting for its own (see
   * {@code MemoryStore}). Changes nothing and answers nothing; the default does nothing. Decorators
   * pass it on.
   */
  default void prefetch(byte[][] partitions, int n) {}

  /** The store's clock, epoch milliseconds. */
  long now();

  @Override
  default void close() {}

  /** This store wrapped by {@code decorator} (e.g. {@code MeteredStore.newDecorator(metrics)}). */
  default Store decorate(Function<? super Store, ? extends Store> decorator) {
    return decorator.apply(this);
  }

  /**
   * This store or the layer under it of type {@code type}: decorators override this to look at
   * themselves, then at their delegate.
   */
  default <T> Optional<T> as(Class<T> type) {
    return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
  }

  /** Completes when every future has, with their values in order; fails if any fails. */
  static <T> CompletableFuture<List<T>> all(List<CompletableFuture<T>> futures) {
    return CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new))
        .thenApply(ignored -> futures.stream().map(CompletableFuture::join).toList());
  }
}
