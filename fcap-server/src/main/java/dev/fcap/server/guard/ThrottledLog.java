package dev.fcap.server.guard;

import dev.fcap.time.Clock;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * A warning that an unauthenticated caller can trigger at will (a slow body, a wrong API key) is
 * written at most once per interval, with the number of similar ones left out since the last line:
 * a flood of bad requests costs a few lines, never a line (or a stack trace) per request.
 *
 * <p>One {@link AtomicLong} holds the earliest time of the next line; whoever moves it forward by
 * compare-and-set writes the line, every other caller only counts. Time is the injected
 * {@link Clock}, so tests replay a flood on a manual clock.
 */
public final class ThrottledLog {
  /** One line per 10 s and kind of trouble: enough to see an attack, too few to fill a disk. */
  public static final long DEFAULT_INTERVAL_MS = 10_000;
  private final Logger log;
  private final Clock clock;
  private final long intervalMs;
  private final AtomicLong nextLine = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong skipped = new AtomicLong();
  private final AtomicLong lines = new AtomicLong();

  public ThrottledLog(Logger log, Clock clock, long intervalMs) {
    this.log = log;
    this.clock = clock;
    this.intervalMs = intervalMs;
  }

  /** Logs {@code message} at WARN unless a line was written less than an interval ago. */
  public void warn(String message) {
    long now = clock.millis();
    long next = nextLine.get();
    if (now < next || !nextLine.compareAndSet(next, now + intervalMs)) {
      skipped.incrementAndGet();
      return;
    }
    long left = skipped.getAndSet(0);
    lines.incrementAndGet();
    if (left == 0) {
      log.warn(message);
    } else {
      log.warn("{} ({} similar left out since the last line)", message, left);
    }
  }

  /** Lines written so far. */
  public long lines() {
    return lines.get();
  }
}
