package dev.fcap.time;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A clock that follows a wall clock without ever stepping: it advances with a monotonic clock and
 * moves towards the wall clock by at most {@link #RATE} of the real time passed, as NTP slews.
 *
 * <p><b>Why.</b> Windows are counted in the store's time. A wall clock stepped forward by 61 s (NTP,
 * a VM resumed) would free every window of a minute at once, so a recipient who just had 15 of 15
 * could have 15 more a second later; stepped back, it would freeze them. On this clock a step is
 * absorbed gradually: while the offset to the wall clock lasts, this clock runs at most 10 % fast
 * (a forward step) or 10 % slow (a backward one), so a cap admits at most 10 % more per real window
 * or frees at most 11 % later (a window of W takes W / 0.9), and the offset shrinks by 6 s per minute (a 61 s step is gone in
 * 610 s). 10 % keeps a cap close to its limit while a step of a minute is absorbed in ten: a slower
 * rate (NTP's 0.05 %) would keep calendar days and send windows a minute off the wall for a day and
 * a half.
 *
 * <p><b>Bound.</b> This clock's time differs from the wall clock by the steps not yet absorbed (at
 * most the sum of their sizes, shrinking at {@link #RATE}) plus the wall clock's resolution; without
 * steps it is the wall clock. It never goes backwards. A change of the offset larger than
 * {@link #STEP_THRESHOLD_MS} between two readings is a step: counted ({@link #steps()}) and told to
 * the {@link StepListener} once.
 *
 * <p><b>Concurrency.</b> Each reading reads both clocks and moves the state under one lock, held for
 * two clock readings and a little arithmetic, so readers on many threads wait little, and every
 * reading sees the one before it (never backwards across threads).
 */
public final class SlewingClock implements Clock {
  /** The most this clock moves towards the wall clock, as a share of the real time passed. */
  public static final double RATE = 0.1;
  /** A change of the offset to the wall clock larger than this, between two readings, is a step. */
  public static final long STEP_THRESHOLD_MS = 1_000;
  private static final long NANOS_PER_MS = 1_000_000;

  /** Told of each step of the wall clock, once, after the reading that saw it. */
  @FunctionalInterface
  public interface StepListener {
    /**
     * @param stepMs how far the wall clock stepped (positive: forward)
     * @param offsetMs the wall clock minus this clock's time, still to absorb
     */
    void stepped(long stepMs, long offsetMs);
  }

  private final Clock wall;
  private final LongSupplier monotonicNanos;
  private final double rate;
  private final long stepThresholdNanos;
  private final StepListener listener;
  private final AtomicLong steps = new AtomicLong();
  /** Guarded by this: the monotonic reading, this clock's time (epoch ns) and the offset at the last reading. */
  private long lastMonotonic;
  private long timeNanos;
  private long offsetNanos;

  SlewingClock(Clock wall, LongSupplier monotonicNanos, double rate, long stepThresholdMs, StepListener listener) {
    if (!(rate > 0 && rate < 1)) {
      throw new IllegalArgumentException("rate must be between 0 and 1 (exclusive): " + rate);
    }
    this.wall = Objects.requireNonNull(wall, "wall");
    this.monotonicNanos = Objects.requireNonNull(monotonicNanos, "monotonicNanos");
    this.rate = rate;
    this.stepThresholdNanos = stepThresholdMs * NANOS_PER_MS;
    this.listener = Objects.requireNonNull(listener, "listener");
    this.lastMonotonic = monotonicNanos.getAsLong();
    this.timeNanos = wall.millis() * NANOS_PER_MS;
  }

  /**
   * A clock starting at {@code wall}'s time, advancing with {@code monotonicNanos} (such as
   * {@code System::nanoTime}) and following {@code wall} at {@link #RATE}.
   */
  public static SlewingClock following(Clock wall, LongSupplier monotonicNanos, StepListener listener) {
    return new SlewingClock(wall, monotonicNanos, RATE, STEP_THRESHOLD_MS, listener);
  }

  @Override
  public long millis() {
    long step;
    long offset;
    long now;
    synchronized (this) {
      long monotonic = monotonicNanos.getAsLong();
      long wallNanos = wall.millis() * NANOS_PER_MS;
      // a monotonic clock that went back (it should not) counts as no time passed
      long elapsed = Math.max(0, monotonic - lastMonotonic);
      long free = timeNanos + elapsed;
      long seen = wallNanos - free;
      step = Math.abs(seen - offsetNanos) > stepThresholdNanos ? seen - offsetNanos : 0;
      long most = (long) (elapsed * rate);
      long correction = Math.max(-most, Math.min(most, seen));
      timeNanos = free + correction;
      offsetNanos = seen - correction;
      lastMonotonic = monotonic;
      now = Math.floorDiv(timeNanos, NANOS_PER_MS);
      offset = offsetNanos / NANOS_PER_MS;
    }
    if (step != 0) {
      steps.incrementAndGet();
      listener.stepped(step / NANOS_PER_MS, offset);
    }
    return now;
  }

  /** The steps of the wall clock seen so far. */
  public long steps() {
    return steps.get();
  }

  /** The wall clock minus this clock's time at the last reading, in milliseconds: the step still to absorb. */
  public long offsetMillis() {
    synchronized (this) {
      return offsetNanos / NANOS_PER_MS;
    }
  }
}
