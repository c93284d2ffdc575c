package dev.fcap.server.failure;

import dev.fcap.store.ManualClock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** A {@link Scheduler} on a {@link ManualClock}: tasks run only when the test ticks past their time. */
final class ManualScheduler implements Scheduler {
  private record Task(long due, long seq, Runnable run) {}

  private final ManualClock clock;
  private final List<Task> tasks = new ArrayList<>();
  private long seq;

  ManualScheduler(ManualClock clock) {
    this.clock = clock;
  }

  @Override
  public synchronized Runnable schedule(Runnable task, long delayMs) {
    Task t = new Task(clock.millis() + delayMs, seq++, task);
    tasks.add(t);
    return () -> {
      synchronized (this) {
        tasks.remove(t);
      }
    };
  }

  /** Moves the clock by {@code ms}, running every task that falls due, in time order, at its time. */
  void tick(long ms) {
    long end = clock.millis() + ms;
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.stream().filter(t -> t.due <= end).min(Comparator.comparingLong(Task::due)
            .thenComparingLong(Task::seq)).orElse(null);
        if (next != null) {
          tasks.remove(next);
        }
      }
      if (next == null) {
        break;
      }
      if (next.due > clock.millis()) {
        clock.set(next.due);
      }
      next.run.run();
    }
    clock.set(end);
  }

  synchronized int pending() {
    return tasks.size();
  }
}
