package dev.fcap.algorithm;

import dev.fcap.store.CounterSpec;

/**
 * The exact sliding log.
 *
 * <p><b>Design.</b> A message of cost c at time t passes check (L, W) iff the costs recorded in
 * (t - W, t] plus c are at most L, and, when the log holds messages booked after t, iff every window
 * (s - W, s] with s in [t, t + W) stays within L with it ({@link #evaluateBooked}, {@link #earliest}:
 * one pass over the entries). Only admitted messages are recorded, so the window never holds
 * more than L cost units and every cost is at least 1: the newest {@code maxLimit} entries within
 * {@code maxWindow} are all any check of the counter can ever read. That bounds the state by the
 * limit, not by traffic, and lets every rule with the same key and selection share one log (the seed
 * policy's 15/min and 50/day rules read one list of at most 50 timestamps).
 *
 * <p><b>Layout</b> (big-endian): {@code flags:u8, newest:i64, entries...}, entries newest first, each
 * {@code age:u32} ({@code age:i64} when flag WIDE=1 is set, for windows over 49 days) followed by
 * {@code cost:u32} when flag COSTS=2 is set (some cost is not 1). An entry's time is
 * {@code newest - age}. Typical state: 9 + 4 bytes per message in the window.
 */
final class SlidingLog implements CounterAlgorithm {
  static final SlidingLog INSTANCE = new SlidingLog();

  static final int WIDE = 1;
  static final int COSTS = 2;
  static final int HEADER = 9;

  private SlidingLog() {}

  /** A decoded view: times newest first, and their costs. */
  private static final class Entries {
    long[] times;
    long[] costs;
    int n;

    Entries(int capacity) {
      times = new long[capacity];
      costs = new long[capacity];
    }
  }

  private static int entrySize(int flags) {
    return ((flags & WIDE) != 0 ? 8 : 4) + ((flags & COSTS) != 0 ? 4 : 0);
  }

  static int size(byte[] state) {
    return size(state, 0, Bytes.length(state));
  }

  /** The number of entries of the state {@code s[from, from + length)} (length 0: empty). */
  private static int size(byte[] s, int from, int length) {
    return length == 0 ? 0 : (length - HEADER) / entrySize(s[from]);
  }

  /** The time of entry {@code i} (newest first) of a non-empty state. */
  static long timeAt(byte[] s, int i) {
    return time(s, 0, s[0], Bytes.getLong(s, 1), i);
  }

  /** The cost of entry {@code i} (newest first) of a non-empty state. */
  static long costAt(byte[] s, int i) {
    return cost(s, 0, s[0], i);
  }

  /** The state of entries given newest first (null when n is 0). */
  static byte[] encode(long[] times, long[] costs, int n) {
    Entries e = new Entries(0);
    e.times = times;
    e.costs = costs;
    e.n = n;
    return encode(e);
  }

  /** The time of entry {@code i} of the state at {@code s[from]}. */
  private static long time(byte[] s, int from, int flags, long newest, int i) {
    int at = from + HEADER + i * entrySize(flags);
    return newest - ((flags & WIDE) != 0 ? Bytes.getLong(s, at) : Bytes.getUint(s, at));
  }

  /** The cost of entry {@code i} of the state at {@code s[from]}. */
  private static long cost(byte[] s, int from, int flags, int i) {
    if ((flags & COSTS) == 0) {
      return 1;
    }
    int at = from + HEADER + i * entrySize(flags) + ((flags & WIDE) != 0 ? 8 : 4);
    return Bytes.getUint(s, at);
  }

  @Override
  public boolean evaluate(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost,
      long[] used, long[] retryAt, int at) {
    int n = size(s, from, length);
    int flags = n == 0 ? 0 : s[from];
    long newest = n == 0 ? 0 : Bytes.getLong(s, from + 1);
    if (n > 0 && newest > now) {
      return evaluateBooked(s, from, flags, newest, n, spec, now, cost, used, retryAt, at);
    }
    boolean admitted = true;
    for (int c = 0; c < spec.checks(); c++) {
      long limit = spec.bound(c); // what this message may bring the count to
      long window = spec.windowMs(c);
      long sum = 0;
      int inWindow = 0;
      while (inWindow < n && time(s, from, flags, newest, inWindow) > now - window) {
        sum += cost(s, from, flags, inWindow);
        inWindow++;
      }
      used[at + c] = sum;
      long retry;
      if (sum + cost <= limit) {
        retry = now;
      } else if (cost > limit) {
        retry = NEVER;
      } else {
        // Let the oldest entries of the window age out until the message fits.
        retry = NEVER;
        long remaining = sum;
        for (int i = inWindow - 1; i >= 0; i--) {
          remaining -= cost(s, from, flags, i);
          if (remaining + cost <= limit) {
            retry = time(s, from, flags, newest, i) + window;
            break;
          }
        }
      }
      retryAt[at + c] = retry;
      if (retry != now && spec.refuses(c)) {
        admitted = false;
      }
    }
    return admitted;
  }

  /**
   * {@link #evaluate} of a log that holds messages booked after {@code now}: a window that contains
   * {@code now} may end after it, so each check reads every window the message would join, (s - W, s]
   * for s in [now, now + W). {@code used} is the fullest of them; {@code retryAt} the first instant
   * from which none of the windows a message there would join is full ({@link #earliest}).
   */
  private static boolean evaluateBooked(byte[] s, int from, int flags, long newest, int n, CounterSpec spec,
      long now, long cost, long[] used, long[] retryAt, int at) {
    boolean admitted = true;
    for (int c = 0; c < spec.checks(); c++) {
      long limit = spec.bound(c);
      long window = spec.windowMs(c);
      used[at + c] = fullest(s, from, flags, newest, n, window, now);
      long retry = cost > limit ? NEVER : earliest(s, from, flags, newest, n, window, limit - cost, now);
      retryAt[at + c] = retry;
      if (retry != now && spec.refuses(c)) {
        admitted = false;
      }
    }
    return admitted;
  }

  @Override
  public boolean books() {
    return true;
  }

  @Override
  public int bookings(byte[] s, int from, int length, CounterSpec spec, long align, long now) {
    int n = size(s, from, length);
    int booked = 0;
    long newest = n == 0 ? 0 : Bytes.getLong(s, from + 1);
    while (booked < n && time(s, from, s[from], newest, booked) > now) {
      booked++;
    }
    return booked;
  }

  @Override
  public long admitsFrom(byte[] s, int from, int length, CounterSpec spec, long align, long x, long cost) {
    int n = size(s, from, length);
    int flags = n == 0 ? 0 : s[from];
    long newest = n == 0 ? 0 : Bytes.getLong(s, from + 1);
    long y = x;
    // the checks in turn until each in a row admits y: each move is later, to the end of a full span, so it stops
    for (int c = 0, agreed = 0; agreed < spec.checks(); c = (c + 1) % spec.checks()) {
      if (!spec.refuses(c)) {
        agreed++;
        continue;
      }
      if (cost > spec.bound(c)) {
        return NEVER;
      }
      long z = earliest(s, from, flags, newest, n, spec.windowMs(c), spec.bound(c) - cost, y);
      agreed = z == y ? agreed + 1 : 1;
      y = z;
    }
    return y;
  }

  /**
   * The earliest instant y at or after {@code x} at which a message may be recorded under a check of
   * {@code window}: every window (s - W, s] it would join, s in [y, y + W), holds at most {@code room}
   * before it. Each of those windows holds y, so y is refused iff some window of length W holds y and
   * more than room: a run of consecutive entries, oldest a and newest b with b - a < W, that holds
   * more than room refuses exactly the instants in (b - W, a + W). Taking for each entry, oldest
   * first, the shortest such run from it, both ends of these spans only grow: y moves to a + W past
   * each span that holds it, and the first span that begins at or after y ends the search. One pass
   * over the entries, with no entry and exit events to merge.
   */
  private static long earliest(byte[] s, int from, int flags, long newest, int n, long window, long room, long x) {
    long y = x;
    int i = n - 1; // the run's oldest entry (entries are newest first)
    while (i >= 0 && time(s, from, flags, newest, i) + window <= y) {
      i--; // its spans end by y
    }
    int j = i; // the next entry the run takes: it holds entries i down to j + 1
    long sum = 0;
    for (; i >= 0; i--) {
      while (sum <= room && j >= 0) {
        sum += cost(s, from, flags, j);
        j--;
      }
      if (sum <= room) {
        return y; // no run from i on holds more than room
      }
      long a = time(s, from, flags, newest, i);
      long b = time(s, from, flags, newest, j + 1);
      if (b - a < window) {
        if (b - window >= y) {
          return y;
        }
        y = Math.max(y, a + window);
      }
      sum -= cost(s, from, flags, i);
    }
    return y;
  }

  /**
   * The most cost any window (s - W, s] holds for s in [x, x + W): the fullest window a message at x
   * joins. A window holds the most where an entry enters it, so the windows ending at x and at each
   * entry in (x, x + W) are read, entries leaving as they pass.
   */
  private static long fullest(byte[] s, int from, int flags, long newest, int n, long window, long x) {
    int oldest = n - 1; // the oldest entry held
    int next = n - 1; // the next entry to enter
    long held = 0;
    for (; next >= 0 && time(s, from, flags, newest, next) <= x; next--) {
      held += cost(s, from, flags, next);
    }
    for (; oldest > next && time(s, from, flags, newest, oldest) <= x - window; oldest--) {
      held -= cost(s, from, flags, oldest);
    }
    long most = held;
    for (; next >= 0; next--) {
      long t = time(s, from, flags, newest, next);
      if (t >= x + window) {
        break; // every later window ends after the message's last one
      }
      held += cost(s, from, flags, next);
      for (; time(s, from, flags, newest, oldest) <= t - window; oldest--) {
        held -= cost(s, from, flags, oldest);
      }
      most = Math.max(most, held);
    }
    return most;
  }

  @Override
  public byte[] book(byte[] state, CounterSpec spec, long align, long now, long at, long cost) {
    return insert(state, 0, Bytes.length(state), spec, now, at, cost);
  }

  @Override
  public byte[] record(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost) {
    int keep = keptByOne(s, from, length, spec, now, cost);
    if (keep < 0) {
      return recordGeneral(s, from, length, spec, now, cost);
    }
    byte[] out = new byte[HEADER + keep * 4];
    writeOne(s, from, length, now, keep, out, 0);
    return out;
  }

  /** The common case writes the new state into the states' scratch: the record copies it from there. */
  @Override
  public void record(CounterStates states, int i, CounterSpec spec, long align, long now, long cost) {
    byte[] s = states.source(i);
    int from = states.from(i);
    int length = states.length(i);
    int keep = keptByOne(s, from, length, spec, now, cost);
    if (keep < 0) {
      states.set(i, recordGeneral(s, from, length, spec, now, cost));
      return;
    }
    byte[] out = states.newState(i, HEADER + keep * 4);
    writeOne(s, from, length, now, keep, out, states.from(i));
  }

  /** {@link #recordGeneral(byte[], int, int, CounterSpec, long, long)} of a whole state. */
  static byte[] recordGeneral(byte[] state, CounterSpec spec, long now, long cost) {
    return recordGeneral(state, 0, Bytes.length(state), spec, now, cost);
  }

  /** {@link #record} by decoding, inserting, pruning and encoding: any cost, any layout, any clock. */
  private static byte[] recordGeneral(byte[] s, int from, int length, CounterSpec spec, long now, long cost) {
    return insert(s, from, length, spec, now, now, cost);
  }

  /** Records a message of {@code cost} at {@code at} (now, or booked later), pruned at {@code now}. */
  private static byte[] insert(byte[] s, int from, int length, CounterSpec spec, long now, long at, long cost) {
    Entries e = decode(s, from, length, 1);
    int pos = 0;
    while (pos < e.n && e.times[pos] > at) {
      pos++; // booked later, or the clock went back: keep the log ordered newest first
    }
    System.arraycopy(e.times, pos, e.times, pos + 1, e.n - pos);
    System.arraycopy(e.costs, pos, e.costs, pos + 1, e.n - pos);
    e.times[pos] = at;
    e.costs[pos] = cost;
    e.n++;
    return encode(prune(e, spec, now));
  }

  /**
   * The common case of {@link #record} without decoding: cost 1 into a narrow log without costs, at
   * or after its newest entry. The new entry has age 0 and every kept entry ages by
   * {@code now - newest}; entries are kept while younger than the longest window and within the
   * capacity, exactly as {@link #prune} would, so the bytes equal the general path's. Returns how
   * many entries the new state keeps, the new one included, or -1 when the case does not apply (the
   * general path then runs).
   */
  private static int keptByOne(byte[] s, int from, int length, CounterSpec spec, long now, long cost) {
    if (cost != 1 || spec.keepsWindow()) {
      return -1;
    }
    int n = size(s, from, length);
    if (n > 0 && (s[from] != 0 || now < Bytes.getLong(s, from + 1))) {
      return -1;
    }
    long shift = n == 0 ? 0 : now - Bytes.getLong(s, from + 1);
    long maxWindow = spec.maxWindowMs();
    long capacity = capacity(spec);
    int keep = 1;
    while (keep <= n && keep < capacity) {
      long age = Bytes.getUint(s, from + HEADER + (keep - 1) * 4) + shift;
      if (age >= maxWindow) {
        break;
      }
      if (age > 0xFFFF_FFFFL) {
        return -1; // needs the wide layout
      }
      keep++;
    }
    return keep;
  }

  /**
   * Writes the new state of {@link #keptByOne}'s case, every byte of it (the destination may hold
   * old bytes), at {@code out[at]}: the layout byte, the newest time, the new entry, the kept ones.
   */
  private static void writeOne(byte[] s, int from, int length, long now, int keep, byte[] out, int at) {
    long shift = length == 0 ? 0 : now - Bytes.getLong(s, from + 1);
    out[at] = 0; // narrow, no costs
    Bytes.putLong(out, at + 1, now);
    Bytes.putUint(out, at + HEADER, 0); // the new entry, age 0
    for (int k = 1; k < keep; k++) {
      Bytes.putUint(out, at + HEADER + k * 4, Bytes.getUint(s, from + HEADER + (k - 1) * 4) + shift);
    }
  }

  @Override
  public byte[] release(byte[] state, CounterSpec spec, long align, long now, long eventTime, long cost) {
    Entries e = decode(state, 0, Bytes.length(state), 0);
    for (int i = 0; i < e.n; i++) {
      if (e.times[i] == eventTime && e.costs[i] == cost) {
        System.arraycopy(e.times, i + 1, e.times, i, e.n - i - 1);
        System.arraycopy(e.costs, i + 1, e.costs, i, e.n - i - 1);
        e.n--;
        return encode(e); // pruning belongs to record: a release drops the released event only
      }
    }
    return state;
  }

  @Override
  public long expiresAt(byte[] s, int from, int length, CounterSpec spec, long align) {
    return size(s, from, length) == 0 ? Long.MIN_VALUE : Bytes.getLong(s, from + 1) + spec.maxWindowMs();
  }

  /**
   * How much cost a log keeps. Enforced checks never let their window hold more than their limit, so
   * {@code maxLimit} suffices. Shadow checks record messages above their limit, and a release may
   * later take one back, so a log with shadow checks keeps a margin above the limit to keep their
   * {@code used} exact; past the margin it saturates (documented in docs/algorithms.md).
   */
  static long capacity(CounterSpec spec) {
    for (int c = 0; c < spec.checks(); c++) {
      if (!spec.enforced(c)) {
        return Math.max(2 * spec.maxLimit(), spec.maxLimit() + 64);
      }
    }
    return spec.maxLimit();
  }

  /**
   * Keeps the entries any check can still read: every entry after {@code now} (booked), and before it
   * those inside the longest window, within the capacity (a window that holds an older entry holds
   * every newer one up to {@code now} too, so it would be over its limit); the
   * whole window when a relaxed check may have let it hold more than the capacity ({@link
   * CounterSpec#keepsWindow}), so that a release never uncovers fewer entries than the window holds.
   */
  private static Entries prune(Entries e, CounterSpec spec, long now) {
    long horizon = now - spec.maxWindowMs();
    long capacity = spec.keepsWindow() ? Long.MAX_VALUE : capacity(spec);
    long newer = 0;
    int keep = 0;
    while (keep < e.n && e.times[keep] > now) {
      keep++; // booked: a window ending after now reads it, and the capacity bounds what is before now
    }
    while (keep < e.n && e.times[keep] > horizon && newer < capacity) {
      newer += e.costs[keep];
      keep++;
    }
    e.n = keep;
    return e;
  }

  private static Entries decode(byte[] s, int from, int length, int spare) {
    int n = size(s, from, length);
    Entries e = new Entries(n + spare);
    if (n > 0) {
      int flags = s[from];
      long newest = Bytes.getLong(s, from + 1);
      for (int i = 0; i < n; i++) {
        e.times[i] = time(s, from, flags, newest, i);
        e.costs[i] = cost(s, from, flags, i);
      }
    }
    e.n = n;
    return e;
  }

  private static byte[] encode(Entries e) {
    if (e.n == 0) {
      return null;
    }
    long newest = e.times[0];
    int flags = 0;
    for (int i = 0; i < e.n; i++) {
      if (newest - e.times[i] > 0xFFFF_FFFFL) {
        flags |= WIDE;
      }
      if (e.costs[i] != 1) {
        flags |= COSTS;
      }
    }
    int size = entrySize(flags);
    byte[] out = new byte[HEADER + e.n * size];
    out[0] = (byte) flags;
    Bytes.putLong(out, 1, newest);
    for (int i = 0; i < e.n; i++) {
      int at = HEADER + i * size;
      long age = newest - e.times[i];
      if ((flags & WIDE) != 0) {
        Bytes.putLong(out, at, age);
        at += 8;
      } else {
        Bytes.putUint(out, at, age);
        at += 4;
      }
      if ((flags & COSTS) != 0) {
        Bytes.putUint(out, at, e.costs[i]);
      }
    }
    return out;
  }
}
