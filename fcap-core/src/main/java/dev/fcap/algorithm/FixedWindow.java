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
 *
 * <p><b>Bookings.</b> A message booked for a later window ({@link #book}) is counted in that window's
 * entry: the state is then a list of such entries, {@code (last:i64, count:u32)} each, oldest window
 * first, the first as above and the others for windows after it (12 bytes a window). A message at x
 * counts the entry of x's window, and is booked at the first instant from x whose window has room.
 *
 * <p><b>Calendar periods.</b> A local day, week or month is a window whose start is {@code align} and
 * whose length is the period's; the periods after it differ in length (a day of 23 hours, a month of
 * 30 days), so a calendar counter's spec carries their ends ({@link CounterSpec#periods}) and a window
 * after the first is looked up there, never computed from the first one's length. The store knows
 * no zone: the ends are the engine's, for the message's zone.
 */
final class FixedWindow implements CounterAlgorithm {
  static final FixedWindow INSTANCE = new FixedWindow();
  static final int SIZE = 12;

  private FixedWindow() {}

  /** The start of the window holding {@code t}. */
  static long windowStart(CounterSpec spec, long t, long align) {
    return bound(spec, t, align, 0);
  }

  /** The end of the window holding {@code t}: the next one's start. */
  static long windowEnd(CounterSpec spec, long t, long align) {
    return bound(spec, t, align, 1);
  }

  /** The start ({@code plus} 0) or end (1) of the window holding {@code t}. */
  private static long bound(CounterSpec spec, long t, long align, int plus) {
    long window = spec.windowMs(0);
    if (spec.periods() == 0 || t < align + window) { // before the periods too: windows of the first's length
      return (Math.floorDiv(t - align, window) + plus) * window + align;
    }
    int i = period(spec, t, align);
    return i < spec.periods() ? align + spec.periodEnd(i - 1 + plus) : beyond(spec, t, align, plus);
  }

  /** The period holding {@code t}, at or after the first one's end: its index, or the count of periods if after them all. */
  private static int period(CounterSpec spec, long t, long align) {
    int i = 1;
    while (i < spec.periods() && t >= align + spec.periodEnd(i)) {
      i++;
    }
    return i;
  }

  /** After the last period: the start ({@code plus} 0) or end (1) of windows of the last period's length. */
  private static long beyond(CounterSpec spec, long t, long align, int plus) {
    int n = spec.periods();
    long from = align + spec.periodEnd(n - 1);
    long length = spec.periodEnd(n - 1) - (n > 1 ? spec.periodEnd(n - 2) : 0);
    return from + (Math.floorDiv(t - from, length) + plus) * length;
  }

  @Override
  public boolean evaluate(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost,
      long[] used, long[] retryAt, int at) {
    long limit = spec.bound(0); // what this message may bring the count to
    long start = windowStart(spec, now, align);
    if (length > SIZE || length == SIZE && Bytes.getLong(s, from) >= windowEnd(spec, now, align)) {
      return evaluateBooked(s, from, length, spec, align, now, cost, used, retryAt, at);
    }
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
      retry = windowEnd(spec, last, align);
    }
    retryAt[at] = retry;
    return retry == now || !spec.refuses(0);
  }

  /** {@link #evaluate} of a state that holds windows booked after now's: the count of now's window alone. */
  private static boolean evaluateBooked(byte[] s, int from, int length, CounterSpec spec, long align, long now,
      long cost, long[] used, long[] retryAt, int at) {
    long limit = spec.bound(0);
    used[at] = countAt(s, from, length, spec, align, now);
    long retry = cost > limit ? NEVER : firstWithRoom(s, from, length, spec, align, now, limit - cost);
    retryAt[at] = retry;
    return retry == now || !spec.refuses(0);
  }

  /**
   * The count of the window holding {@code t}: the entries whose {@code last} lies in it (the first
   * entry also while it lies in an earlier window not before it, as without bookings: it is read
   * when its window is the current one).
   */
  private static long countAt(byte[] s, int from, int length, CounterSpec spec, long align, long t) {
    long start = windowStart(spec, t, align);
    long end = windowEnd(spec, t, align);
    long count = 0;
    for (int e = from; e < from + length; e += SIZE) {
      long last = Bytes.getLong(s, e);
      if (last >= start && last < end) {
        count += Bytes.getUint(s, e + 8);
      }
    }
    return count;
  }

  /**
   * The first instant from {@code x} whose window holds at most {@code room}: x, or a later window's
   * start. One pass: the entries are kept by window, oldest first, so each window's count is the run
   * of entries in it.
   */
  private static long firstWithRoom(byte[] s, int from, int length, CounterSpec spec, long align, long x,
      long room) {
    long t = x;
    int e = from;
    while (true) {
      long start = windowStart(spec, t, align);
      long end = windowEnd(spec, t, align);
      long count = 0;
      for (; e < from + length && Bytes.getLong(s, e) < end; e += SIZE) {
        count += Bytes.getLong(s, e) >= start ? Bytes.getUint(s, e + 8) : 0;
      }
      if (count <= room) {
        return t;
      }
      t = end;
    }
  }

  @Override
  public boolean books() {
    return true;
  }

  @Override
  public int bookings(byte[] s, int from, int length, CounterSpec spec, long align, long now) {
    return (from + length - firstLater(s, from, length, spec, align, now)) / SIZE;
  }

  /**
   * Where the entries of windows after the one holding {@code t} begin in the state at {@code s[from]}
   * (its end if none): the entries are kept by window, oldest first, so those are its last ones.
   */
  static int firstLater(byte[] s, int from, int length, CounterSpec spec, long align, long t) {
    long next = windowEnd(spec, t, align);
    int e = from;
    while (e < from + length && Bytes.getLong(s, e) < next) {
      e += SIZE;
    }
    return e;
  }

  @Override
  public long admitsFrom(byte[] s, int from, int length, CounterSpec spec, long align, long x, long cost) {
    if (!spec.refuses(0)) {
      return x;
    }
    long limit = spec.bound(0);
    return cost > limit ? NEVER : firstWithRoom(s, from, length, spec, align, x, limit - cost);
  }

  @Override
  public byte[] book(byte[] state, CounterSpec spec, long align, long now, long at, long cost) {
    return add(state, spec, align, now, at, cost);
  }

  @Override
  public byte[] record(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost) {
    long start = windowStart(spec, now, align);
    if (length > SIZE || length == SIZE && Bytes.getLong(s, from) >= windowEnd(spec, now, align)) {
      return add(java.util.Arrays.copyOfRange(s, from, from + length), spec, align, now, now, cost);
    }
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

  /**
   * {@code state} with a message of {@code cost} counted in the window holding {@code at} (now's, or a
   * later one: booked), and without the windows that ended before now's.
   */
  private static byte[] add(byte[] state, CounterSpec spec, long align, long now, long at, long cost) {
    long current = windowStart(spec, now, align);
    long target = windowStart(spec, at, align);
    int n = state == null ? 0 : state.length / SIZE;
    long[] lasts = new long[n + 1];
    long[] counts = new long[n + 1];
    int kept = 0;
    boolean added = false;
    for (int i = 0; i < n; i++) {
      long last = Bytes.getLong(state, i * SIZE);
      long count = Bytes.getUint(state, i * SIZE + 8);
      if (last < current) {
        continue; // a window that has ended
      }
      long start = windowStart(spec, last, align);
      if (!added && start > target) {
        lasts[kept] = at;
        counts[kept++] = cost;
        added = true;
      }
      if (!added && start == target) {
        last = Math.max(last, at);
        count += cost;
        added = true;
      }
      lasts[kept] = last;
      counts[kept++] = count;
    }
    if (!added) {
      lasts[kept] = at;
      counts[kept++] = cost;
    }
    byte[] out = new byte[kept * SIZE];
    for (int i = 0; i < kept; i++) {
      Bytes.putLong(out, i * SIZE, lasts[i]);
      Bytes.putUint(out, i * SIZE + 8, counts[i]);
    }
    return out;
  }

  @Override
  public byte[] release(byte[] state, CounterSpec spec, long align, long now, long eventTime, long cost) {
    if (state != null && state.length > SIZE) {
      return releaseBooked(state, spec, align, now, eventTime, cost);
    }
    // the count is the window of the newest recorded message; the event gives back a unit only if it
    // lies in that window and the window is still live at the release's time (a release at an older
    // time, or of an older window's message, must not take a unit of the current window)
    if (state == null || Bytes.getLong(state, 0) < windowStart(spec, now, align)
        || eventTime < windowStart(spec, Bytes.getLong(state, 0), align)) {
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

  /** {@link #release} of a state of several windows: from the live window that holds the event, if any. */
  private static byte[] releaseBooked(byte[] state, CounterSpec spec, long align, long now, long eventTime,
      long cost) {
    long current = windowStart(spec, now, align);
    for (int e = 0; e < state.length; e += SIZE) {
      long last = Bytes.getLong(state, e);
      if (last >= current && eventTime >= windowStart(spec, last, align) && eventTime < windowEnd(spec, last, align)) {
        long count = Bytes.getUint(state, e + 8) - cost;
        byte[] out;
        if (count > 0) {
          out = state.clone();
          Bytes.putUint(out, e + 8, count);
        } else {
          out = new byte[state.length - SIZE];
          System.arraycopy(state, 0, out, 0, e);
          System.arraycopy(state, e + SIZE, out, e, state.length - e - SIZE);
        }
        return out.length == 0 ? null : out;
      }
    }
    return state;
  }

  @Override
  public long expiresAt(byte[] s, int from, int length, CounterSpec spec, long align) {
    if (length == 0) {
      return Long.MIN_VALUE;
    }
    return windowEnd(spec, Bytes.getLong(s, from + length - SIZE), align); // the last window's end
  }
}
