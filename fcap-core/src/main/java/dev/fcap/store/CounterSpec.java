package dev.fcap.store;

import dev.fcap.model.Algorithm;
import java.util.Arrays;
import java.util.Objects;

/**
 * How one counter counts: its algorithm and the checks that read it. A {@code sliding-log} counter
 * can carry several checks (rules with the same key and selection share one log); every other
 * algorithm carries exactly one. Immutable; built once per compiled policy and shared by requests.
 */
public final class CounterSpec {
  private final Algorithm algorithm;
  private final long[] limits;
  private final long[] windowsMs;
  private final boolean[] enforced;
  private final int precision;
  private final long maxLimit;
  private final long maxWindowMs;

  public CounterSpec(Algorithm algorithm, long[] limits, long[] windowsMs, boolean[] enforced, int precision) {
    this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
    if (limits.length == 0 || limits.length != windowsMs.length || limits.length != enforced.length) {
      throw new IllegalArgumentException("limits, windows and enforced flags must be non-empty and aligned");
    }
    if (algorithm != Algorithm.SLIDING_LOG && limits.length != 1) {
      throw new IllegalArgumentException(algorithm + " counters carry exactly one check");
    }
    this.limits = limits.clone();
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
    return algorithm + Arrays.toString(limits) + "/" + Arrays.toString(windowsMs);
  }
}
