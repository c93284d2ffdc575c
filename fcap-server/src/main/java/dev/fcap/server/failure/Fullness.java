package dev.fcap.server.failure;

import dev.fcap.time.Clock;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the embedded store is full, told by its refusals: full from the first refusal, no longer
 * full once it has refused nothing for {@link FailurePolicy#fullQuietMs()}. Edge-triggered, so each
 * change is logged once however many requests the store refuses; one timer runs while full, none
 * otherwise.
 */
final class Fullness {
  private static final Logger LOG = LoggerFactory.getLogger(FailoverStore.class); // the decorator's log, one name

  private final Clock clock;
  private final Scheduler scheduler;
  private final long quietMs;
  /** What the store holds, for the log lines. */
  private final Supplier<String> capacity;
  private final AtomicBoolean full = new AtomicBoolean();
  private final AtomicLong lastRefusal = new AtomicLong();
  private final AtomicLong retryAfterMs = new AtomicLong(-1);

  Fullness(Clock clock, Scheduler scheduler, long quietMs, Supplier<String> capacity) {
    this.clock = clock;
    this.scheduler = scheduler;
    this.quietMs = Math.max(1, quietMs);
    this.capacity = capacity;
  }

  boolean full() {
    return full.get();
  }

  /** The delay the last refusal gave until room may free (-1: unknown). */
  long retryAfterMs() {
    return retryAfterMs.get();
  }

  /** The store refused a new partition; room may free after {@code retryAfterMs} (-1: unknown). */
  void refused(long retryAfterMs) {
    lastRefusal.set(clock.millis());
    this.retryAfterMs.set(retryAfterMs);
    if (full.compareAndSet(false, true)) {
      LOG.warn("store full: store.maxBytes reached ({}); a new recipient gets the failure policy for a full store "
          + "(failure.full) until counters expire{}", capacity.get(),
          retryAfterMs < 0 ? "" : ", the first in " + retryAfterMs + " ms");
      scheduler.schedule(this::check, quietMs);
    }
  }

  private void check() {
    long quietFor = clock.millis() - lastRefusal.get();
    if (quietFor < quietMs) {
      scheduler.schedule(this::check, quietMs - quietFor);
      return;
    }
    if (full.compareAndSet(true, false)) {
      LOG.info("store no longer full: nothing refused for {} ms ({}); new recipients are held again", quietFor,
          capacity.get());
      if (clock.millis() - lastRefusal.get() < quietMs) {
        refused(this.retryAfterMs.get()); // a refusal came in between: still full
      }
    }
  }
}
