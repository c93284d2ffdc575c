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

  /**
   * Whether this store can lose its data while this process runs (a Redis restarted without
   * persistence, flushed, or failed over to an empty replica), and marks its data so that
   * {@link #checkIdentity} can tell. A store in this process cannot: the default is false.
   */
  default boolean keepsIdentity() {
    return false;
  }

  /**
   * Reads the identity this store wrote into its data when it first connected (written once, without
   * expiry) and compares it with the one it last saw: completes with why the store lost its data (the
   * identity is missing, or another one replaced it) or empty if it holds the same. A lost identity is
   * written anew, so a loss is reported once. The default (a store that keeps none) answers empty.
   */
  default CompletableFuture<Optional<String>> checkIdentity() {
    return CompletableFuture.completedFuture(Optional.empty());
  }

  @Override
  default void close() {}

  /** This store wrapped by {@code decorator} (e.g. {@code MeteredStore.newDecorator(metrics)}). */
  default Store decorate(Function<? super Store, ? extends Store> decorator) {
    return decorator.apply(this);
  }

  /**
   * Whether this store books deferred messages: it honours a request's {@link Booking} (recording a
   * message not admitted now at a later instant) and reads messages recorded ahead exactly. A store
   * that does not is never given a booking: the engine refuses the deferral. The default is false.
   */
  default boolean books() {
    return false;
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
