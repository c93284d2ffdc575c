package dev.fcap.algorithm;

import dev.fcap.store.CounterSpec;

/**
 * A counting algorithm as pure functions over a compact binary state. A {@code null} state is the
 * empty counter. Functions never modify their input; a change returns a new array. The hot two,
 * {@code evaluate} and {@code record}, read a state where it lies, a slice of a larger array (a
 * store's record: {@link CounterStates}), so a decision copies no state out of it. The binary
 * layouts are documented on each implementation and mirrored byte for byte by the Redis scripts, so
 * that a state written by one store reads the same in the other.
 *
 * <p>Times are epoch milliseconds. {@code align} places calendar windows (see
 * {@link dev.fcap.store.CounterRequest#alignMs()}).
 */
public interface CounterAlgorithm {

  /** Sentinel for {@code retryAt}: the message can never be admitted (its cost exceeds the limit). */
  long NEVER = dev.fcap.store.PartitionResult.NEVER;

  /**
   * Evaluates every check of the counter whose state is {@code s[from, from + length)} (length 0:
   * empty) for a message of {@code cost} at {@code now}, writing {@code used[at + i]} and
   * {@code retryAt[at + i]} for check i ({@code retryAt} is {@code now} when the check admits). The
   * state is read in place (see {@link CounterStates}).
   *
   * @return true iff every enforced check admits
   */
  boolean evaluate(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost, long[] used,
      long[] retryAt, int at);

  /** {@link #evaluate(byte[], int, int, CounterSpec, long, long, long, long[], long[], int)} of a whole state. */
  default boolean evaluate(byte[] state, CounterSpec spec, long align, long now, long cost, long[] used,
      long[] retryAt, int at) {
    return evaluate(state, 0, Bytes.length(state), spec, align, now, cost, used, retryAt, at);
  }

  /**
   * Records a message of {@code cost} at {@code now} into the state {@code s[from, from + length)}
   * (length 0: empty), read in place; drops what can no longer matter. Returns the new state.
   */
  byte[] record(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost);

  /**
   * {@link #record(byte[], int, int, CounterSpec, long, long, long)} of state {@code i} of
   * {@code states}, which becomes the new state: by default an array of its own; an algorithm may
   * write it into the states' scratch instead ({@link CounterStates#newState}).
   */
  default void record(CounterStates states, int i, CounterSpec spec, long align, long now, long cost) {
    states.set(i, record(states.source(i), states.from(i), states.length(i), spec, align, now, cost));
  }

  /** {@link #record(byte[], int, int, CounterSpec, long, long, long)} of a whole state. */
  default byte[] record(byte[] state, CounterSpec spec, long align, long now, long cost) {
    return record(state, 0, Bytes.length(state), spec, align, now, cost);
  }

  /**
   * Whether the algorithm can book a message for later ({@link #admitsFrom}, {@link #book}) and reads
   * booked messages exactly: only the sliding log keeps each message's own time.
   */
  default boolean books() {
    return false;
  }

  /**
   * How many entries of the state at {@code s[from]} lie after {@code now}'s (booked): a log's
   * entries after now, a fixed window's windows after now's. Only where {@link #books()}.
   */
  default int bookings(byte[] s, int from, int length, CounterSpec spec, long align, long now) {
    return 0;
  }

  /**
   * The earliest instant at or after {@code x} at which every enforced check of the counter whose
   * state is {@code s[from, from + length)} admits a message of {@code cost}, counting the messages
   * booked after it: at that instant, every window the message would join stays within its bound.
   * {@link #NEVER} if none ever does. Only where {@link #books()}.
   */
  default long admitsFrom(byte[] s, int from, int length, CounterSpec spec, long align, long x, long cost) {
    throw new UnsupportedOperationException("this algorithm books nothing");
  }

  /**
   * Records a message of {@code cost} at {@code at}, at or after {@code now} (booked), into
   * {@code state}, dropping what can no longer matter at {@code now}. Only where {@link #books()}.
   */
  default byte[] book(byte[] state, CounterSpec spec, long align, long now, long at, long cost) {
    throw new UnsupportedOperationException("this algorithm books nothing");
  }

  /** Undoes a message of {@code cost} recorded at {@code eventTime}; a no-op if it is no longer held. */
  byte[] release(byte[] state, CounterSpec spec, long align, long now, long eventTime, long cost);

  /**
   * The first instant at which the state {@code s[from, from + length)} (length 0: empty) no longer
   * affects any decision; it may be dropped then.
   */
  long expiresAt(byte[] s, int from, int length, CounterSpec spec, long align);

  /** {@link #expiresAt(byte[], int, int, CounterSpec, long)} of a whole state. */
  default long expiresAt(byte[] state, CounterSpec spec, long align) {
    return expiresAt(state, 0, Bytes.length(state), spec, align);
  }

  /** The implementation of an algorithm. */
  static CounterAlgorithm of(dev.fcap.model.Algorithm algorithm) {
    return switch (algorithm) {
      case SLIDING_LOG -> SlidingLog.INSTANCE;
      case SLIDING_COUNTER -> SlidingCounter.INSTANCE;
      case FIXED_WINDOW -> FixedWindow.INSTANCE;
      case GCRA -> Gcra.INSTANCE;
    };
  }
}
