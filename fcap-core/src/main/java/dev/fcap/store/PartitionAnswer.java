package dev.fcap.store;

import dev.fcap.model.Suppression;

/**
 * What a store answered for one {@link PartitionRequest}, read check by check (checks in the order of
 * the request's counters and their checks): the immutable {@link PartitionResult} that
 * {@link Store#apply} completes with, or the {@link dev.fcap.store.internal.ReusableResult} a caller owns and a store that
 * answers on the calling thread writes into ({@link dev.fcap.store.internal.CallingThreadStore#applyInto}). The engine reads both alike.
 */
public interface PartitionAnswer {

  /** The clock value the store decided at (epoch ms). */
  long time();

  /** True iff every enforced check admitted (for DECIDE: the message was then recorded). */
  boolean allowed();

  /** The number of checks. */
  int checks();

  /** The cost counted in check {@code check}'s window before this message. */
  long used(int check);

  /**
   * {@link #time()} if check {@code check} admits, the earliest time it would admit the same message
   * if nothing else were recorded, or {@link PartitionResult#NEVER}.
   */
  long retryAt(int check);

  /** Null, or the id of the earlier admitted decision of the same message id (see {@link PartitionResult}). */
  String replayOf();

  /** True when a failover decorator answered from its outage store instead of the store. */
  boolean degraded();

  /** The partition's incarnation for a DECIDE that asked for one (see {@link PartitionResult}); else 0. */
  long incarnation();

  /**
   * The recipient's suppression entry that covers the message, for a request with a
   * {@link SuppressionCheck} (the step was then a dry run); null otherwise.
   */
  default Suppression suppressed() {
    return null;
  }

  /**
   * For a deferred DECIDE ({@link PartitionRequest#booking()}) not admitted at {@link #time()}: the
   * later instant the message was recorded at (booked), else 0. A booked answer is not
   * {@link #allowed()}; its checks report the decision at {@link #time()}.
   */
  default long bookedAt() {
    return 0;
  }

  /** The instant the message was recorded at, if it was: {@link #bookedAt()}, else {@link #time()}. */
  default long recordedAt() {
    return bookedAt() != 0 ? bookedAt() : time();
  }

  /** Whether check {@code check} admitted the message. */
  default boolean admits(int check) {
    return retryAt(check) == time();
  }
}
