package dev.fcap.store;

import java.util.List;

/**
 * One atomic unit of work for a store: an operation over some counters of one partition.
 *
 * @param partition the partition key, injective over (tenant, partition identity)
 * @param time the time to decide at (epoch ms), or {@link #STORE_TIME} to use the store's clock
 * @param cost the message's cost
 * @param eventTime for {@link Operation#RELEASE}: the time the message was recorded at
 * @param idempotency the message id to remember with an admitted decision (or forget on release); null
 *     for none
 * @param category the message's category (null: none); stores ignore it, a failover decorator reads
 *     it to pick the failure policy's action
 * @param suppression null, or the message's scope for a store that reads the recipient's suppression
 *     entry in the step ({@link SuppressionCheck})
 * @param booking null, or for a deferred DECIDE the instants it may be recorded at instead of now
 *     ({@link Booking}); only a store that {@link Store#books()} is given one
 */
public record PartitionRequest(
    byte[] partition, Operation operation, long time, long cost, List<CounterRequest> counters, long eventTime,
    Idempotency idempotency, String category, SuppressionCheck suppression, Booking booking) {

  /** Asks the store to read its own clock. */
  public static final long STORE_TIME = Long.MIN_VALUE;

  public PartitionRequest {
    counters = List.copyOf(counters);
  }

  /** A request that books nothing. */
  public PartitionRequest(byte[] partition, Operation operation, long time, long cost, List<CounterRequest> counters,
      long eventTime, Idempotency idempotency, String category, SuppressionCheck suppression) {
    this(partition, operation, time, cost, counters, eventTime, idempotency, category, suppression, null);
  }

  /** A request that reads no suppression entry. */
  public PartitionRequest(byte[] partition, Operation operation, long time, long cost, List<CounterRequest> counters,
      long eventTime, Idempotency idempotency, String category) {
    this(partition, operation, time, cost, counters, eventTime, idempotency, category, null);
  }

  public PartitionRequest(
      byte[] partition, Operation operation, long time, long cost, List<CounterRequest> counters, long eventTime) {
    this(partition, operation, time, cost, counters, eventTime, null, null);
  }

  /** This request for a message of {@code category}. */
  public PartitionRequest withCategory(String category) {
    return new PartitionRequest(partition, operation, time, cost, counters, eventTime, idempotency, category, suppression, booking);
  }

  /** This request at a caller-supplied time (a replay of a step decided elsewhere at {@code at}). */
  public PartitionRequest at(long at) {
    return new PartitionRequest(partition, operation, at, cost, counters, eventTime, idempotency, category, suppression, booking);
  }

  public static PartitionRequest of(byte[] partition, Operation op, long time, long cost, List<CounterRequest> counters) {
    return new PartitionRequest(partition, op, time, cost, counters, 0L, null, null);
  }

  /**
   * This request as a release of what it recorded at {@code recordedAt} (a refused or released
   * decision); a message id it carries is forgotten with it.
   */
  public PartitionRequest asRelease(long recordedAt) {
    return new PartitionRequest(partition, Operation.RELEASE, time, cost, counters, recordedAt, idempotency, category, null, null);
  }

  /** This request as a dry run. */
  public PartitionRequest asCheck() {
    return new PartitionRequest(partition, Operation.CHECK, time, cost, counters, eventTime, idempotency, category,
        suppression, null);
  }

  /** This request with {@code booking} instead of its own (null: it books nothing). */
  public PartitionRequest withBooking(Booking booking) {
    return new PartitionRequest(partition, operation, time, cost, counters, eventTime, idempotency, category, suppression, booking);
  }

  /** This request, remembering (or, for a release, forgetting) a message id. */
  public PartitionRequest withIdempotency(Idempotency id) {
    return new PartitionRequest(partition, operation, time, cost, counters, eventTime, id, category, suppression, booking);
  }

  /** The number of checks over all counters: the length of the result arrays. */
  public int checks() {
    int n = 0;
    for (int i = 0; i < counters.size(); i++) { // no iterator: this runs several times per decision
      n += counters.get(i).spec().checks();
    }
    return n;
  }
}
