package dev.fcap.algorithm;

import dev.fcap.store.CounterSpec;

/**
 * The generic cell rate algorithm (a leaky bucket used as a meter): emission interval
 * T = ceil(W / L) in microseconds, burst L. The state is the theoretical arrival time (TAT) of the
 * next message; a message of cost c at t passes iff max(TAT, t) + c T - t is at most B T, where B is the
 * limit L less the headroom of the message's priority ({@link CounterSpec#bound}). Rounding T
 * up keeps the sustained rate at or below L / W.
 *
 * <p><b>Layout</b> (big-endian): {@code tat:i64, interval:i64}, both in microseconds (TAT since the
 * epoch). 16 bytes. The interval is kept so that an edit of the limit or window keeps the count:
 * a state written with another interval holds (TAT - now) / old interval messages in flight, and is
 * rescaled to the same number of messages at the new interval (rounded up, plus 1 µs: never fewer).
 */
final class Gcra implements CounterAlgorithm {
  static final Gcra INSTANCE = new Gcra();

  private Gcra() {}

  private static long interval(CounterSpec spec) {
    return -Math.floorDiv(-spec.windowMs(0) * 1000, spec.limit(0));
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }

  /** The state's TAT at the spec's interval, never before now. */
  private static long tat(byte[] s, int from, int length, long t, long nowUs) {
    if (length == 0) {
      return nowUs;
    }
    long tat = Bytes.getLong(s, from);
    long old = Bytes.getLong(s, from + 8);
    if (tat <= nowUs) {
      return nowUs;
    }
    if (old == t) {
      return tat;
    }
    long ahead = tat - nowUs;
    long whole = ahead / old;
    long rest = ahead % old;
    return nowUs + whole * t + (long) Math.ceil(rest * (double) t / old) + 1;
  }

  private static byte[] state(long tat, long t) {
    byte[] out = new byte[16];
    Bytes.putLong(out, 0, tat);
    Bytes.putLong(out, 8, t);
    return out;
  }

  @Override
  public boolean evaluate(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost,
      long[] used, long[] retryAt, int at) {
    long t = interval(spec);
    long bound = spec.bound(0); // the burst this message may use: the limit less its headroom
    long nowUs = now * 1000;
    long tat = tat(s, from, length, t, nowUs);
    used[at] = Math.min(spec.limit(0), ceilDiv(tat - nowUs, t));
    long retry;
    if (tat - nowUs + cost * t <= bound * t) {
      retry = now;
    } else if (cost > bound) {
      retry = NEVER;
    } else {
      retry = ceilDiv(tat - (bound - cost) * t, 1000);
    }
    retryAt[at] = retry;
    return retry == now || !spec.refuses(0);
  }

  @Override
  public byte[] record(byte[] s, int from, int length, CounterSpec spec, long align, long now, long cost) {
    long t = interval(spec);
    return state(tat(s, from, length, t, now * 1000) + cost * t, t);
  }

  @Override
  public byte[] release(byte[] state, CounterSpec spec, long align, long now, long eventTime, long cost) {
    if (state == null) {
      return null;
    }
    long t = interval(spec);
    long nowUs = now * 1000;
    // the event's cell started draining no earlier than eventTime, so at most what is left of
    // [eventTime, eventTime + cost T) is still held: a cell that has drained is never given back
    long held = Math.min(cost * t, eventTime * 1000 + cost * t - nowUs);
    if (held <= 0) {
      return state;
    }
    long tat = tat(state, 0, state.length, t, nowUs) - held;
    return tat <= nowUs ? null : state(tat, t);
  }

  @Override
  public long expiresAt(byte[] s, int from, int length, CounterSpec spec, long align) {
    return length == 0 ? Long.MIN_VALUE : ceilDiv(Bytes.getLong(s, from), 1000);
  }
}
