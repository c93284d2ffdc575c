package dev.fcap.store;

/**
 * The time source of a store, in epoch milliseconds. Injected everywhere time is read, so tests can
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
