package dev.fcap.algorithm;

import dev.fcap.store.CounterSpec;

/**
 * The generic cell rate algorithm (a leaky bucket used as a meter): emission interval
 * T = ceil(W / L) in microseconds, burst L. The state is the theoretical arrival time (TAT) of the
 * next message; a message of cost c at t passes iff max(TAT, t) + c T - t is at most L T. Rounding T
 * up keeps the sustained rate at or below L / W.
 *
 * <p><b>Layout</b> (big-endian): {@code tat:i64}, in epoch microseconds. 8 bytes.
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

  @Override
  public boolean evaluate(
      byte[] state, CounterSpec spec, long align, long now, long cost, long[] used, long[] retryAt, int at) {
    long t = interval(spec);
    long limit = spec.limit(0);
    long nowUs = now * 1000;
    long tat = state == null ? nowUs : Math.max(nowUs, Bytes.getLong(state, 0));
    used[at] = Math.min(limit, ceilDiv(tat - nowUs, t));
    long retry;
    if (tat - nowUs + cost * t <= limit * t) {
      retry = now;
    } else if (cost > limit) {
      retry = NEVER;
    } else {
      retry = ceilDiv(tat - (limit - cost) * t, 1000);
    }
    retryAt[at] = retry;
    return retry == now || !spec.enforced(0);
  }

  @Override
  public byte[] record(byte[] state, CounterSpec spec, long align, long now, long cost) {
    long nowUs = now * 1000;
    long tat = state == null ? nowUs : Math.max(nowUs, Bytes.getLong(state, 0));
    byte[] out = new byte[8];
    Bytes.putLong(out, 0, tat + cost * interval(spec));
    return out;
  }

  @Override
  public byte[] release(byte[] state, CounterSpec spec, long align, long now, long eventTime, long cost) {
    if (state == null) {
      return null;
    }
    long nowUs = now * 1000;
    long tat = Bytes.getLong(state, 0) - cost * interval(spec);
    if (tat <= nowUs) {
      return null;
    }
    byte[] out = new byte[8];
    Bytes.putLong(out, 0, tat);
    return out;
  }

  @Override
  public long expiresAt(byte[] state, CounterSpec spec, long align) {
    return state == null ? Long.MIN_VALUE : ceilDiv(Bytes.getLong(state, 0), 1000);
  }
}
