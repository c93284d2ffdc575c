package dev.fcap.algorithm;

import dev.fcap.store.CounterSpec;
import java.util.Arrays;

/**
 * A sliding log for large limits, with the exact semantics of {@link SlidingLog} at a cost per
 * decision that does not depend on the limit.
 *
 * <p><b>Design.</b> {@link SlidingLog} keeps its entries in one array that every record copies:
 * O(limit) bytes per decision, 38 times the seed rule's cost for a channel-wide 10^6-per-hour rule.
 * Here the entries live in a ring, oldest first, each with its time and the cumulative cost of
 * every entry up to it ({@code cum}), and are mutated in place (the embedded store holds the log
 * under its segment lock, beside the partition's record). Then, with n entries held:
 * <ul>
 *   <li>a check's window (t - W, t] starts at the first entry newer than t - W: a binary search,
 *       O(log n); its used cost is a difference of two {@code cum}s, O(1);</li>
 *   <li>the retry time is the time of the first entry whose removal lets the message fit: a binary
 *       search on {@code cum}, O(log n);</li>
 *   <li>a record at or after the newest entry appends, O(1) amortized (the ring doubles up to the
 *       log's capacity, so memory stays bounded by the limit); pruning moves the head past what no
 *       check can read (older than the longest window, or beyond the capacity), two binary searches;</li>
 *   <li>a record before the newest entry (the clock went back; the stores clamp a request to its
 *       partition's time, so only after the partition's time was dropped) and a release move the k
 *       entries newer than the event by one slot: O(k), k = entries recorded after the event. A
 *       release moves at most {@link #MAX_RELEASE_MOVES}: one of a message with more entries after
 *       it gives nothing back (its cost stays counted until it leaves the window: conservative), so
 *       that no Redis script call moves more than one block (docs/benchmarks.md: 9 ms at k = 1,000,
 *       0.47 s at k = 60,000).</li>
 * </ul>
 * Worked example: 10^6 per hour, 200,000 entries held; a decision does 2 binary searches of 18
 * probes (window start, prune) and writes one slot, where {@link SlidingLog} copied 800 KB.
 *
 * <p>Used when {@link #isLarge} holds: the capacity is above {@link #LARGE_FROM} entries; smaller
 * logs keep {@link SlidingLog}'s compact layout (the seed policy's 50 entries fit in 209 bytes of
 * its partition record). {@link #encode} and {@link #of} convert between the two, for inspection
 * and for a rule edited across the threshold. Tested against {@link SlidingLog} and a brute-force
 * oracle by {@code LargeLogProperties}.
 *
 * <p>Not thread-safe: the store serializes access (the segment lock).
 */
public final class LargeLog {
  /** Logs that can hold more entries than this use a {@code LargeLog}. */
  public static final long LARGE_FROM = 1024;
  /** The most entries a release moves (one 4 KiB block on Redis); see the class note. */
  public static final int MAX_RELEASE_MOVES = 256;

  private long[] times = new long[16];
  private long[] cums = new long[16];
  /** Absolute index of the oldest entry; slot = index & (length - 1). */
  private long head;
  /** Absolute index after the newest entry. */
  private long tail;
  /** The cumulative cost before the oldest entry. */
  private long headCum;

  /** Whether counters of {@code spec} use a {@code LargeLog} (sliding logs with a large capacity). */
  public static boolean isLarge(CounterSpec spec) {
    return spec.algorithm() == dev.fcap.model.Algorithm.SLIDING_LOG && SlidingLog.capacity(spec) > LARGE_FROM;
  }

  /** A log holding the entries of a {@link SlidingLog} state (null: empty). */
  public static LargeLog of(byte[] state) {
    LargeLog log = new LargeLog();
    int n = SlidingLog.size(state);
    for (int i = n - 1; i >= 0; i--) {
      log.append(SlidingLog.timeAt(state, i), SlidingLog.costAt(state, i));
    }
    return log;
  }

  /** The entries in {@link SlidingLog}'s layout (for inspection and a rule edited below the threshold). */
  public byte[] encode() {
    int n = size();
    long[] t = new long[n];
    long[] c = new long[n];
    for (int i = 0; i < n; i++) {
      long at = tail - 1 - i;
      t[i] = time(at);
      c[i] = cost(at);
    }
    return SlidingLog.encode(t, c, n);
  }

  public boolean isEmpty() {
    return head == tail;
  }

  public int size() {
    return (int) (tail - head);
  }

  /** Heap held by the ring. */
  public long bytes() {
    return 2L * (16 + times.length * 8L);
  }

  /** {@link CounterAlgorithm#evaluate}, reading the log in place. */
  public boolean evaluate(CounterSpec spec, long now, long cost, long[] used, long[] retryAt, int at) {
    boolean admitted = true;
    for (int c = 0; c < spec.checks(); c++) {
      long limit = spec.bound(c); // what this message may bring the count to
      long window = spec.windowMs(c);
      long from = firstAfter(now - window);
      long before = cumBefore(from);
      long sum = cumTotal() - before;
      used[at + c] = sum;
      long retry;
      if (sum + cost <= limit) {
        retry = now;
      } else if (cost > limit) {
        retry = CounterAlgorithm.NEVER;
      } else {
        // the first entry of the window whose ageing out (with all before it) lets the message fit
        long i = firstCumAtLeast(from, before + sum + cost - limit);
        retry = time(i) + window;
      }
      retryAt[at + c] = retry;
      if (retry != now && spec.refuses(c)) {
        admitted = false;
      }
    }
    return admitted;
  }

  /** {@link CounterAlgorithm#record}: inserts the message in time order, then prunes. */
  public void record(CounterSpec spec, long now, long cost) {
    long pos = firstAfter(now);
    if (pos == tail) {
      append(now, cost);
    } else {
      insertAt(pos, now, cost); // the clock went back: keep the log ordered
    }
    prune(spec, now);
  }

  /**
   * {@link CounterAlgorithm#release}: removes the newest entry at {@code eventTime} of {@code cost},
   * if held and at most {@link #MAX_RELEASE_MOVES} entries were recorded after it.
   */
  public void release(CounterSpec spec, long now, long eventTime, long cost) {
    long i = releasable(eventTime, cost);
    if (i >= 0 && tail - 1 - i <= MAX_RELEASE_MOVES) {
      removeAt(i); // pruning belongs to record: a release drops the released event only
      if (head == tail) {
        head = tail = 0;
        headCum = 0;
      }
    }
  }

  /** The index of the newest entry at {@code eventTime} of {@code cost}, or -1. */
  private long releasable(long eventTime, long cost) {
    long lo = firstAfter(eventTime - 1);
    for (long i = firstAfter(eventTime) - 1; i >= lo; i--) {
      if (cost(i) == cost) {
        return i;
      }
    }
    return -1;
  }

  /** How many entries were recorded after the one a release of ({@code eventTime}, {@code cost}) finds; -1 if none. */
  long entriesAfter(long eventTime, long cost) {
    long i = releasable(eventTime, cost);
    return i < 0 ? -1 : tail - 1 - i;
  }

  /** {@link CounterAlgorithm#expiresAt}: when the newest entry leaves the longest window. */
  public long expiresAt(CounterSpec spec) {
    return isEmpty() ? Long.MIN_VALUE : time(tail - 1) + spec.maxWindowMs();
  }

  /** Drops what no check can read: entries older than the longest window, or beyond the capacity. */
  private void prune(CounterSpec spec, long now) {
    long byTime = firstAfter(now - spec.maxWindowMs());
    // keep entry i while the cost of the entries newer than it is below the capacity
    // (a record of a relaxed check keeps the whole window, as SlidingLog.prune does)
    long byCapacity = spec.keepsWindow() ? head : firstCumAtLeast(head, cumTotal() - SlidingLog.capacity(spec) + 1);
    long next = Math.max(byTime, byCapacity);
    if (next > head) {
      headCum = cumBefore(next);
      head = next;
    }
    if (head == tail) {
      head = tail = 0;
      headCum = 0;
    }
  }

  private int slot(long index) {
    return (int) (index & (times.length - 1));
  }

  private long time(long index) {
    return times[slot(index)];
  }

  private long cumThrough(long index) {
    return cums[slot(index)];
  }

  private long cumBefore(long index) {
    return index == head ? headCum : cumThrough(index - 1);
  }

  private long cumTotal() {
    return cumBefore(tail);
  }

  private long cost(long index) {
    return cumThrough(index) - cumBefore(index);
  }

  /** The first index in [head, tail) whose time is after {@code t}, or tail. */
  private long firstAfter(long t) {
    long lo = head;
    long hi = tail;
    while (lo < hi) {
      long mid = (lo + hi) >>> 1;
      if (time(mid) > t) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

  /** The first index in [from, tail) whose cumulative cost is at least {@code target}, or tail. */
  private long firstCumAtLeast(long from, long target) {
    long lo = from;
    long hi = tail;
    while (lo < hi) {
      long mid = (lo + hi) >>> 1;
      if (cumThrough(mid) >= target) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

  private void append(long time, long cost) {
    ensureRoom();
    long cum = cumTotal() + cost;
    times[slot(tail)] = time;
    cums[slot(tail)] = cum;
    tail++;
  }

  private void insertAt(long pos, long time, long cost) {
    ensureRoom();
    for (long i = tail; i > pos; i--) {
      times[slot(i)] = times[slot(i - 1)];
      cums[slot(i)] = cums[slot(i - 1)] + cost;
    }
    times[slot(pos)] = time;
    cums[slot(pos)] = cumBefore(pos) + cost;
    tail++;
  }

  private void removeAt(long pos) {
    long cost = cost(pos);
    for (long i = pos; i < tail - 1; i++) {
      times[slot(i)] = times[slot(i + 1)];
      cums[slot(i)] = cums[slot(i + 1)] - cost;
    }
    tail--;
  }

  private void ensureRoom() {
    if (tail - head < times.length) {
      return;
    }
    int n = times.length;
    long[] t = new long[n * 2];
    long[] c = new long[n * 2];
    for (long i = head; i < tail; i++) {
      t[(int) (i & (2 * n - 1))] = times[slot(i)];
      c[(int) (i & (2 * n - 1))] = cums[slot(i)];
    }
    times = t;
    cums = c;
  }

  @Override
  public String toString() {
    return "LargeLog" + Arrays.toString(new long[] {head, tail, headCum});
  }
}
