package dev.fcap.algorithm;

import dev.fcap.store.CounterSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * The messages a counter holds for later: a deferred message is recorded at the instant it was
 * booked for, so a log's entries after an instant are its bookings still to come, and a fixed
 * window's windows after the one holding an instant hold only bookings. Read-only, for inspection;
 * public only because the engine's inspector sits in another package.
 */
public final class BookedEntries {
  private static final long[] NONE = new long[0];

  private BookedEntries() {}

  /**
   * The times (epoch ms) of the entries of a sliding-log {@code state} later than {@code after},
   * oldest first; empty for an empty state.
   */
  public static long[] times(byte[] state, long after) {
    int n = SlidingLog.size(state);
    int later = 0;
    while (later < n && SlidingLog.timeAt(state, later) > after) { // newest first: the later ones lead
      later++;
    }
    if (later == 0) {
      return NONE;
    }
    long[] times = new long[later];
    for (int i = 0; i < later; i++) {
      times[later - 1 - i] = SlidingLog.timeAt(state, i);
    }
    return times;
  }

  /**
   * The windows of a fixed-window {@code state} (counted as {@code spec} says, aligned at {@code align}) after
   * the one holding {@code after}, oldest first: per window its latest booked instant and the cost
   * booked in it, as {@code {last, count}}. Bookings in the window holding {@code after} count in its
   * {@code used} with the messages admitted there.
   */
  public static long[][] windows(byte[] state, CounterSpec spec, long align, long after) {
    int length = Bytes.length(state);
    List<long[]> later = new ArrayList<>();
    for (int e = FixedWindow.firstLater(state, 0, length, spec, align, after); e < length; e += FixedWindow.SIZE) {
      later.add(new long[] {Bytes.getLong(state, e), Bytes.getUint(state, e + 8)});
    }
    return later.toArray(long[][]::new);
  }

  /** The costs of the entries {@link #times} returns, in the same order. */
  public static long[] costs(byte[] state, long after) {
    long[] times = times(state, after);
    long[] costs = new long[times.length];
    for (int i = 0; i < times.length; i++) {
      costs[times.length - 1 - i] = SlidingLog.costAt(state, i);
    }
    return costs;
  }
}
