package dev.fcap.store.memory;

import dev.fcap.time.Clock;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The time by which a {@link MemoryStore} drops partitions other than the one a request is for.
 *
 * A request decides at its own time (the store's clock, or a
 * caller-supplied time for replays and tests), but never before its partition's latest written time
 * ({@code PartitionRecord.latest}: a step back of the clock is decided at that time, since what a
 * write pruned or dropped by its time is gone), and within its own partition everything happens in
 * that partition's request order, like the algorithms' own pruning. Dropping <i>other</i> partitions
 * (the incremental sweep, the full sweep before {@code FULL}, {@link MemoryStore#evictExpired}) goes by the
 * {@linkplain #time() sweep time} instead, which no request can go below: the store's clock
 * while every request uses it; once a request has carried its own time, the lower of the clock and
 * the floor that callers raise with {@link MemoryStore#advanceCallerTimeFloor} (none by default: then nothing
 * is swept at all until the floor is raised). Caller times are not monotonic across callers: a
 * replay decides recipients on two threads, each at its own row's time, hours apart; sweeping by the
 * faster thread's time would drop counters the slower thread still needs, and over-admit
 * ({@code MemoryStoreSweepTest}, {@code ReplayOracleTest}).
 */
final class SweepClock {
  private final Clock clock;
  /** How far the clock may step back without a sweep dropping what a later request still reads. */
  private final long graceMs;
  /** Set once a request carries its own time; from then on the sweep waits for the floor. */
  private volatile boolean callerTimeSeen;
  /** No later request carries a caller time below this (raised by {@link #advanceFloor}). */
  private final AtomicLong floor = new AtomicLong(Long.MIN_VALUE);

  SweepClock(Clock clock, long graceMs) {
    this.clock = clock;
    this.graceMs = graceMs;
  }

  /** A request carried its own time: from now on the sweep goes no further than the floor. */
  void callerTimeSeen() {
    if (!callerTimeSeen) { // a write only the first time: every request of a replay calls this
      callerTimeSeen = true;
    }
  }

  /**
   * Lets the sweep drop partitions that expired before {@code time}: the caller promises that no
   * later request carries a time below it. The floor only rises; a lower value is ignored.
   */
  void advanceFloor(long time) {
    floor.accumulateAndGet(time, Math::max);
  }

  /**
   * The sweep time: the store's clock less the grace, or, once requests have carried their own times,
   * the lower of that and the caller-time floor.
   */
  long time() {
    long clockNow = clock.millis() - graceMs;
    return callerTimeSeen ? Math.min(clockNow, floor.get()) : clockNow;
  }
}
