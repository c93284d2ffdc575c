package dev.fcap.algorithm;

import dev.fcap.store.CounterSpec;

/**
 * The sliding counter: the window W is cut into {@code precision} (B) sub-windows of width
 * w = ceil(W / B) ms, aligned to the epoch, and a check counts every sub-window that overlaps
 * (t - W, t], whole.
 *
 * <p><b>Error bound.</b> The counted sub-windows cover at most W + w - 1 ms ending at t, and at least
 * the window itself. So the counter never admits more than L in any window of length W (it is
 * conservative: it can only over-count), and it refuses a message only if an exact log over the
 * longer window W + w - 1 would refuse it too. With the default B = 60 the effective window is at most
 * 1/60 (1.7 %) longer than configured. {@code SlidingCounterBoundProperties} checks both halves.
 *
 * <p><b>Layout</b> (big-endian): {@code width:i64, newest:i64, entries...}, entries newest first,
 * each {@code age:u16} (in sub-windows, from {@code newest}) and {@code count:u32}; empty sub-windows
 * are not stored. Memory is O(B) whatever L is. A state written with another width (the rule's window
 * or precision was edited) is folded conservatively into the sub-window holding its latest instant.
 */
final class SlidingCounter implements CounterAlgorithm {
  static final SlidingCounter INSTANCE = new SlidingCounter();
  private static final int HEADER = 16;
  private static final int ENTRY = 6;

  private SlidingCounter() {}

  static long width(CounterSpec spec) {
    return Math.max(1, ceilDiv(spec.windowMs(0), spec.precision()));
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }

  /** Sub-window indexes and counts, newest first, in the width of the spec. */
  private static final class Buckets {
    long[] index;
    long[] count;
    int n;
  }

  /** The buckets of the state {@code s[from, from + length)} (length 0: empty). */
  private static Buckets decode(byte[] s, int from, int length, long width, int spare) {
    Buckets b = new Buckets();
    int n = length == 0 ? 0 : (length - HEADER) / ENTRY;
    b.index = new long[n + spare];
    b.count = new long[n + spare];
    if (n == 0) {
      return b;
    }
    long oldWidth = Bytes.getLong(s, from);
    long newest = Bytes.getLong(s, from + 8);
    if (oldWidth != width) {
      long total = 0;
      for (int i = 0; i < n; i++) {
        total += Bytes.getUint(s, from + HEADER + i * ENTRY + 2);
      }
      b.index[0] = Math.floorDiv((newest + 1) * oldWidth - 1, width);
      b.count[0] = total;
      b.n = 1;
      return b;
    }
    for (int i = 0; i < n; i++) {
      int at = from + HEADER + i * ENTRY;
      b.index[i] = newest - Bytes.getUshort(s, at);
      b.count[i] = Bytes.getUint(s, at + 2);
    }
    b.n = n;
    return b;
  }

  private static byte[] encode(Buckets b, long width) {
    if (b.n == 0) {
      return null;
    }
    byte[] out = new byte[HEADER + b.n * ENTRY];
    Bytes.putLong(out, 0, width);
    Bytes.putLong(out, 8, b.index[0]);
    for (int i = 0; i < b.n; i++) {
      int at = HEADER + i * ENTRY;
      Bytes.putUshort(out, at, (int) (b.index[0] - b.index[i]));
      Bytes.putUint(out, at + 2, b.count[i]);
    }
    return out;
  }

  /** The oldest sub-window that still overlaps (now - W, now]. */
  private static long oldestOverlapping(long now, long window, long width) {
    return Math.floorDiv(now - window + 1, width);
  }

  @Override
  public boolean evaluate(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost,
      long[] used, long[] retryAt, int at) {
    long width = width(spec);
    long window = spec.windowMs(0);
    long limit = spec.bound(0); // what this message may bring the count to
    Buckets b = decode(s, from, length, width, 0);
    long oldest = oldestOverlapping(now, window, width);
    int counted = 0;
    long sum = 0;
    while (counted < b.n && b.index[counted] >= oldest) {
      sum += b.count[counted];
      counted++;
    }
    used[at] = sum;
    long retry;
    if (sum + cost <= limit) {
      retry = now;
    } else if (cost > limit) {
      retry = NEVER;
    } else {
      retry = NEVER;
      long remaining = sum;
      for (int i = counted - 1; i >= 0; i--) {
        remaining -= b.count[i];
        if (remaining + cost <= limit) {
          retry = (b.index[i] + 1) * width + window - 1;
          break;
        }
      }
    }
    retryAt[at] = retry;
    return retry == now || !spec.refuses(0);
  }

  @Override
  public byte[] record(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost) {
    long width = width(spec);
    Buckets b = decode(s, from, length, width, 1);
    long current = Math.floorDiv(now, width);
    int pos = 0;
    while (pos < b.n && b.index[pos] > current) {
      pos++;
    }
    if (pos < b.n && b.index[pos] == current) {
      b.count[pos] += cost;
    } else {
      System.arraycopy(b.index, pos, b.index, pos + 1, b.n - pos);
      System.arraycopy(b.count, pos, b.count, pos + 1, b.n - pos);
      b.index[pos] = current;
      b.count[pos] = cost;
      b.n++;
    }
    return encode(prune(b, spec, now, width), width);
  }

  @Override
  public byte[] release(byte[] state, CounterSpec spec, long align, long now, long eventTime, long cost) {
    long width = width(spec);
    Buckets b = decode(state, 0, Bytes.length(state), width, 0);
    long bucket = Math.floorDiv(eventTime, width);
    if (bucket < oldestOverlapping(now, spec.windowMs(0), width)) {
      return state; // its sub-window no longer counts: nothing of it is held
    }
    for (int i = 0; i < b.n; i++) {
      if (b.index[i] == bucket) {
        b.count[i] = Math.max(0, b.count[i] - cost);
        if (b.count[i] == 0) {
          System.arraycopy(b.index, i + 1, b.index, i, b.n - i - 1);
          System.arraycopy(b.count, i + 1, b.count, i, b.n - i - 1);
          b.n--;
        }
        return encode(b, width); // pruning belongs to record: a release drops the released unit only
      }
    }
    return state;
  }

  private static Buckets prune(Buckets b, CounterSpec spec, long now, long width) {
    long oldest = oldestOverlapping(now, spec.windowMs(0), width);
    int keep = 0;
    while (keep < b.n && b.index[keep] >= oldest && b.index[0] - b.index[keep] <= 0xFFFF) {
      keep++;
    }
    b.n = keep;
    return b;
  }

  @Override
  public long expiresAt(byte[] s, int from, int length, CounterSpec spec, long align) {
    if (length == 0) {
      return Long.MIN_VALUE;
    }
    long width = Bytes.getLong(s, from);
    long newest = Bytes.getLong(s, from + 8);
    return (newest + 1) * width + Math.max(spec.windowMs(0), width) - 1;
  }
}
