package dev.fcap.store;

import dev.fcap.model.Algorithm;
import java.util.Arrays;
import java.util.Objects;

/**
 * How one counter counts: its algorithm and the checks that read it. A {@code sliding-log} counter
 * can carry several checks (rules with the same key and selection share one log); every other
 * algorithm carries exactly one. Immutable; built once per compiled policy and shared by requests.
 *
 * <p>Each check has a limit and a bound: the limit is what the counter keeps (a log's capacity, GCRA's
 * emission interval); the bound is what this message may bring the count to (the limit less the
 * headroom its priority must leave; {@link dev.fcap.model.Headroom}). They differ only per message,
 * so a counter's state never depends on a bound.
 */
public final class CounterSpec {
  private final Algorithm algorithm;
  private final long[] limits;
  private final long[] bounds;
  private final long[] windowsMs;
  private final boolean[] enforced;
  private final int precision;
  private final long maxLimit;
  private final long maxWindowMs;

  public CounterSpec(Algorithm algorithm, long[] limits, long[] windowsMs, boolean[] enforced, int precision) {
    this(algorithm, limits, limits, windowsMs, enforced, precision);
  }

  /** A counter whose checks admit up to {@code bounds} rather than their limits ({@code bounds[i] <= limits[i]}). */
  public CounterSpec(Algorithm algorithm, long[] limits, long[] bounds, long[] windowsMs, boolean[] enforced,
      int precision) {
    this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
    if (limits.length == 0 || limits.length != windowsMs.length || limits.length != enforced.length
        || limits.length != bounds.length) {
      throw new IllegalArgumentException("limits, bounds, windows and enforced flags must be non-empty and aligned");
    }
    for (int i = 0; i < limits.length; i++) {
      if (bounds[i] > limits[i]) {
        throw new IllegalArgumentException("a bound above its limit: " + bounds[i] + " > " + limits[i]);
      }
    }
    if (algorithm != Algorithm.SLIDING_LOG && limits.length != 1) {
      throw new IllegalArgumentException(algorithm + " counters carry exactly one check");
    }
    this.limits = limits.clone();
    this.bounds = bounds == limits ? this.limits : bounds.clone();
    this.windowsMs = windowsMs.clone();
    this.enforced = enforced.clone();
    this.precision = precision;
    this.maxLimit = Arrays.stream(limits).max().orElseThrow();
    this.maxWindowMs = Arrays.stream(windowsMs).max().orElseThrow();
  }

  /** A counter with one check. */
  public static CounterSpec single(Algorithm algorithm, long limit, long windowMs, boolean enforced, int precision) {
    return new CounterSpec(algorithm, new long[] {limit}, new long[] {windowMs}, new boolean[] {enforced}, precision);
  }

  public Algorithm algorithm() {
    return algorithm;
  }

  public int checks() {
    return limits.length;
  }

  public long limit(int check) {
    return limits[check];
  }

  /** The most check {@code check} lets this message bring the count to: the limit less the message's headroom. */
  public long bound(int check) {
    return bounds[check];
  }

  /** The same counter for a message whose checks admit up to {@code newBounds}. */
  public CounterSpec withBounds(long[] newBounds) {
    return new CounterSpec(algorithm, limits, newBounds, windowsMs, enforced, precision);
  }

  /** The same counter with one window (a calendar period's length). */
  public CounterSpec withWindow(long windowMs) {
    return new CounterSpec(algorithm, limits, bounds, new long[] {windowMs}, enforced, precision);
  }

  public long windowMs(int check) {
    return windowsMs[check];
  }

  public boolean enforced(int check) {
    return enforced[check];
  }

  public int precision() {
    return precision;
  }

  public long maxLimit() {
    return maxLimit;
  }

  public long maxWindowMs() {
    return maxWindowMs;
  }

  @Override
  public String toString() {
    return algorithm + Arrays.toString(limits) + (bounds == limits ? "" : "<=" + Arrays.toString(bounds)) + "/"
        + Arrays.toString(windowsMs);
  }
}
