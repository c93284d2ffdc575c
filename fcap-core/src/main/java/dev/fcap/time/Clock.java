package dev.fcap.time;

/**
 * The time source of the engine and the stores, in epoch milliseconds. Injected everywhere time is read, so tests can
 * drive time by hand and a replay can use the timestamps of its log.
 */
@FunctionalInterface
public interface Clock {

  long millis();

  /** The system's wall clock. */
  static Clock system() {
    return System::currentTimeMillis;
  }
}
