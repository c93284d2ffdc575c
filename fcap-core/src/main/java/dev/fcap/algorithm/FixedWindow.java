package dev.fcap.algorithm;

import dev.fcap.store.CounterSpec;

/**
 * The fixed window: windows [k W + align, (k + 1) W + align) and a count per window; allows up to 2L
 * across a boundary. {@code align} puts day-long windows at midnight of a time zone.
 *
 * <p><b>Layout</b> (big-endian): {@code last:i64, count:u32}, where {@code last} is the time of the
 * newest recorded message. The count belongs to the window holding {@code last}; it is read when
 * that window is the current one (or a later one, if the clock went back). Keeping the time rather
 * than the window index keeps counts across rule edits: after a change of window or zone, messages
 * are counted while they could lie in the current window (conservatively, never fewer).
 */
final class FixedWindow implements CounterAlgorithm {
  static final FixedWindow INSTANCE = new FixedWindow();
  private static final int SIZE = 12;

  private FixedWindow() {}

  private static long windowStart(long t, long window, long align) {
    return Math.floorDiv(t - align, window) * window + align;
  }

  @Override
  public boolean evaluate(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost,
      long[] used, long[] retryAt, int at) {
    long window = spec.windowMs(0);
    long limit = spec.bound(0); // what this message may bring the count to
    long start = windowStart(now, window, align);
    long count = 0;
    long last = Long.MIN_VALUE;
    if (length > 0 && Bytes.getLong(s, from) >= start) {
      last = Bytes.getLong(s, from);
      count = Bytes.getUint(s, from + 8);
    }
    used[at] = count;
    long retry;
    if (count + cost <= limit) {
      retry = now;
    } else if (cost > limit) {
      retry = NEVER;
    } else {
      retry = windowStart(last, window, align) + window;
    }
    retryAt[at] = retry;
    return retry == now || !spec.refuses(0);
  }

  @Override
  public byte[] record(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost) {
    long start = windowStart(now, spec.windowMs(0), align);
    byte[] out = new byte[SIZE];
    if (length > 0 && Bytes.getLong(s, from) >= start) {
      Bytes.putLong(out, 0, Math.max(now, Bytes.getLong(s, from)));
      Bytes.putUint(out, 8, Bytes.getUint(s, from + 8) + cost);
    } else {
      Bytes.putLong(out, 0, now);
      Bytes.putUint(out, 8, cost);
    }
    return out;
  }

  @Override
  public byte[] release(byte[] state, CounterSpec spec, long align, long now, long eventTime, long cost) {
    long window = spec.windowMs(0);
    // the count is the window of the newest recorded message; the event gives back a unit only if it
    // lies in that window and the window is still live at the release's time (a release at an older
    // time, or of an older window's message, must not take a unit of the current window)
    if (state == null || Bytes.getLong(state, 0) < windowStart(now, window, align)
        || eventTime < windowStart(Bytes.getLong(state, 0), window, align)) {
      return state;
    }
    long count = Bytes.getUint(state, 8) - cost;
    if (count <= 0) {
      return null;
    }
    byte[] out = state.clone();
    Bytes.putUint(out, 8, count);
    return out;
  }

  @Override
  public long expiresAt(byte[] s, int from, int length, CounterSpec spec, long align) {
    if (length == 0) {
      return Long.MIN_VALUE;
    }
    long window = spec.windowMs(0);
    return windowStart(Bytes.getLong(s, from), window, align) + window;
  }
}
