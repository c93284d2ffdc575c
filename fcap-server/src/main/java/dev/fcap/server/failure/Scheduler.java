package dev.fcap.server.failure;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task later: the deadlines and probes of {@link FailoverStore}. Injected, so that a test
 * drives time by hand (a manual clock and a scheduler it ticks) instead of sleeping.
 */
@FunctionalInterface
public interface Scheduler {

  /** Runs {@code task} after {@code delayMs}; the returned action cancels it (a no-op once it ran). */
  Runnable schedule(Runnable task, long delayMs);

  /** A scheduler on an executor; use one whose pool removes cancelled tasks, since most deadlines are. */
  static Scheduler of(ScheduledExecutorService executor) {
    return (task, delayMs) -> {
      ScheduledFuture<?> f = executor.schedule(task, delayMs, TimeUnit.MILLISECONDS);
      return () -> f.cancel(false);
    };
  }
}
