package dev.fcap.store;

import dev.fcap.time.Clock;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when a test moves it. */
public final class ManualClock implements Clock {
  /** 2026-01-01T00:00:00Z: a realistic epoch so layouts see real magnitudes. */
  public static final long START = 1_767_225_600_000L;

  private final AtomicLong now;

  public ManualClock() {
    this(START);
  }

  public ManualClock(long start) {
    this.now = new AtomicLong(start);
  }

  @Override
  public long millis() {
    return now.get();
  }

  public void set(long epochMillis) {
    now.set(epochMillis);
  }

  public void advance(long millis) {
    now.addAndGet(millis);
  }

  public void advanceSeconds(long seconds) {
    advance(seconds * 1000);
  }
}
