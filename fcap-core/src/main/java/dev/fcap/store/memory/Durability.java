package dev.fcap.store.memory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Where and how durably a {@link MemoryStore} keeps its state on disk.
 *
 * <p>Every write of a partition is appended to a journal in {@code dir}; {@code syncEvery} says how
 * often the journal is forced to disk: {@link Duration#ZERO} before every write is acknowledged
 * (group commit: the caller's future completes after the fsync that covers it), otherwise at that
 * interval, so a {@code kill -9} or a power loss loses at most the writes of the last interval. A
 * graceful close loses nothing.
 *
 * @param dir the state directory (created if missing)
 * @param syncEvery how often the journal is forced to disk; zero: before every acknowledgement
 */
public record Durability(Path dir, Duration syncEvery) {
  /** The default interval between two forces of the journal to disk. */
  public static final Duration DEFAULT_SYNC_EVERY = Duration.ofSeconds(1);

  public Durability {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(syncEvery, "syncEvery");
    if (syncEvery.isNegative()) {
      throw new IllegalArgumentException("syncEvery must not be negative");
    }
  }

  /** Forced to disk every {@link #DEFAULT_SYNC_EVERY}. */
  public static Durability of(Path dir) {
    return new Durability(dir, DEFAULT_SYNC_EVERY);
  }

  /** Forced to disk before every write is acknowledged. */
  public static Durability everyWrite(Path dir) {
    return new Durability(dir, Duration.ZERO);
  }

  public boolean syncsEveryWrite() {
    return syncEvery.isZero();
  }

  /** For the start log: {@code fsync every 1s} or {@code fsync before every acknowledgement}. */
  public String describe() {
    return syncsEveryWrite() ? "fsync before every acknowledgement"
        : "fsync every " + syncEvery.toMillis() + " ms: a kill -9 or power loss loses at most that";
  }
}
