package dev.fcap.engine;

import dev.fcap.store.PartitionRequest;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Caller-supplied time (replays, tests): whether the engine accepts it, and the latest seen, which is
 * a caller-time engine's "now" for a release (a release carries no time of its own).
 */
final class CallerTime {
  private final boolean enabled;
  private final AtomicLong latest = new AtomicLong(Long.MIN_VALUE);

  CallerTime(boolean enabled) {
    this.enabled = enabled;
  }

  /** {@code epochMillis}, checked and remembered. */
  long accept(long epochMillis) {
    if (!enabled) {
      throw new IllegalStateException("caller-supplied time is not enabled for this engine");
    }
    if (epochMillis == PartitionRequest.STORE_TIME) {
      throw new IllegalArgumentException("time out of range");
    }
    if (epochMillis > latest.get()) { // a write only when it moves: replay's deciders share it
      latest.accumulateAndGet(epochMillis, Math::max);
    }
    return epochMillis;
  }

  /** The time a release runs at: {@code storeTime} for an engine deciding at the store's time, else the latest caller time. */
  long releaseTime(long storeTime) {
    long seen = latest.get();
    return enabled && seen != Long.MIN_VALUE ? seen : storeTime;
  }
}
