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
 *
 * <p>A check may also be relaxed for one message (a {@code countOnly} rule it matches, or an
 * override): it then never refuses the message but counts it when it is admitted. A relaxed check
 * can let its window hold more than its limit, so a log that records a relaxed message keeps its
 * whole window ({@link #keepsWindow}): a later release must never find fewer entries than the
 * window holds. Whether a check is enforced ({@link #enforced}) is the rule's mode and sizes what a
 * counter keeps; whether it refuses this message is {@link #refuses}.
 */
public final class CounterSpec {
  private final Algorithm algorithm;
  private final long[] limits;
  private final long[] bounds;
  private final long[] windowsMs;
  private final boolean[] enforced;
  /** Per check, whether it is relaxed for this message; null: none is. */
  private final boolean[] relaxed;
  private final int precision;
  /**
   * A calendar counter's periods: the end of the period that begins at the request's alignment and of
   * each after it, in ms after that alignment, far enough for any booking; null: windows of one length.
   */
  private final long[] periodEnds;
  private final long maxLimit;
  private final long maxWindowMs;

  public CounterSpec(Algorithm algorithm, long[] limits, long[] windowsMs, boolean[] enforced, int precision) {
    this(algorithm, limits, limits, windowsMs, enforced, precision);
  }

  /** A counter whose checks admit up to {@code bounds} rather than their limits ({@code bounds[i] <= limits[i]}). */
  public CounterSpec(Algorithm algorithm, long[] limits, long[] bounds, long[] windowsMs, boolean[] enforced,
      int precision) {
    this(algorithm, limits, bounds, windowsMs, enforced, null, precision, null);
  }

  private CounterSpec(Algorithm algorithm, long[] limits, long[] bounds, long[] windowsMs, boolean[] enforced,
      boolean[] relaxed, int precision, long[] periodEnds) {
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
    this.relaxed = relaxed == null ? null : relaxed.clone();
    this.precision = precision;
    this.periodEnds = periodEnds;
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
    return new CounterSpec(algorithm, limits, newBounds, windowsMs, enforced, relaxed, precision, periodEnds);
  }

  /**
   * The same fixed window over calendar periods of unequal lengths: {@code ends} are the ends of the
   * period that begins at the request's alignment and of the ones after it, in ms after that
   * alignment, increasing; its window is the first period's length. A store that reads a window
   * beyond the last end takes windows of the last period's length. Periods of one length (days
   * without a daylight-saving change ahead) are windows of that length, and carry no ends: the
   * request stays as small as a fixed window's.
   */
  public CounterSpec withPeriods(long[] ends) {
    if (algorithm != Algorithm.FIXED_WINDOW || ends.length == 0 || ends[0] <= 0) {
      throw new IllegalArgumentException("periods are a fixed window's, and the first must end after it starts");
    }
    for (int i = 1; i < ends.length; i++) {
      if (ends[i] <= ends[i - 1]) {
        throw new IllegalArgumentException("period ends must increase: " + Arrays.toString(ends));
      }
    }
    return new CounterSpec(algorithm, limits, bounds, new long[] {ends[0]}, enforced, relaxed, precision,
        oneLength(ends) ? null : ends.clone());
  }

  /** Whether every period of {@code ends} lasts as long as the first. */
  private static boolean oneLength(long[] ends) {
    for (int i = 1; i < ends.length; i++) {
      if (ends[i] - ends[i - 1] != ends[0]) {
        return false;
      }
    }
    return true;
  }

  /**
   * The same counter with every check in shadow mode, at its limits: it refuses nothing and counts
   * what it is given (an unconditional recording).
   */
  public CounterSpec unenforced() {
    return new CounterSpec(algorithm, limits, limits, windowsMs, new boolean[limits.length], null, precision,
        periodEnds);
  }

  /** How many periods {@link #periodEnd} gives: 0 for windows of one length. */
  public int periods() {
    return periodEnds == null ? 0 : periodEnds.length;
  }

  /** The end of period {@code i} (0: the one that begins at the alignment), in ms after the alignment. */
  public long periodEnd(int i) {
    return periodEnds[i];
  }

  /** Whether this counter's periods end where {@code ends} say ({@link #withPeriods}). */
  public boolean hasPeriods(long[] ends) {
    return periodEnds == null ? windowsMs[0] == ends[0] && oneLength(ends) : Arrays.equals(periodEnds, ends);
  }

  /** The same counter for a message that checks {@code newRelaxed} never refuse (null or none: as it is). */
  public CounterSpec withRelaxed(boolean[] newRelaxed) {
    boolean any = false;
    for (boolean r : newRelaxed) {
      any |= r;
    }
    return any ? new CounterSpec(algorithm, limits, bounds, windowsMs, enforced, newRelaxed, precision, periodEnds)
        : this;
  }

  /** Whether check {@code check} may refuse this message: enforced, and not relaxed for it. */
  public boolean refuses(int check) {
    return enforced[check] && (relaxed == null || !relaxed[check]);
  }

  /** Whether a check is relaxed for this message: a record then keeps the log's whole window. */
  public boolean keepsWindow() {
    return relaxed != null;
  }

  /** Whether check {@code check} is relaxed for this message. */
  public boolean relaxed(int check) {
    return relaxed != null && relaxed[check];
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
