package dev.fcap.store.memory;

import dev.fcap.store.StoreException;
import dev.fcap.store.internal.ReusableRequest;
import dev.fcap.time.Clock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import org.slf4j.LoggerFactory;

/**
 * Makes a {@link MemoryStore} durable: an append-only journal of the partition records each write
 * produces (or, for a decision on a record the store holds, the step that made it: {@link JournalDelta}),
 * and snapshots of the segments that truncate it.
 *
 * <p><b>Design.</b> The store already turns every write into one new immutable record per
 * partition, under its segment's lock. While it holds that lock it appends {@code (key, record)} (or
 * a removal of {@code key}) to the segment's pending buffer: no extra lock, no syscall, no checksum
 * on the request thread. One flusher thread swaps each segment's buffer for an empty one (under the
 * same lock, so a partition's writes reach the file in the order they happened), checksums each
 * entry, writes the buffers every {@link #WRITE_EVERY_MS} ms and forces the file every
 * {@link Durability#syncEvery()} (or, in every-write mode, at once: the callers' futures complete
 * after the force that covers their entry: group commit). Recovery replays entries in file order,
 * and the last write of a partition wins, so the journal needs no sequence numbers and knows
 * nothing of the record layout: records are opaque bytes, and the file header names the layout
 * version ({@link PartitionRecord#FORMAT}) they were written in. A step is the exception: it is
 * replayed on the record before it, which it names by checksum, so a step already in a snapshot is
 * skipped rather than applied twice ({@link JournalRecovery}).
 *
 * <p><b>Snapshots.</b> When the journal has grown past {@link #MIN_SNAPSHOT_BYTES} (and past the
 * size of the last snapshot, so that snapshotting never dominates), the flusher closes journal
 * {@code N-1} and opens journal {@code N}; a second thread then copies each segment's table (under
 * its lock: an array clone; records are immutable) and writes every live record to
 * {@code snapshot-N}, through a temporary file, forced and renamed. A write that happened before
 * the copy of its segment is in the snapshot or in journal {@code N}; one after it is in journal
 * {@code N}. So snapshot {@code N} plus journals {@code >= N} rebuild the store, and older files are
 * deleted once snapshot {@code N} is complete.
 *
 * <p><b>Large sliding logs.</b> They are not in the records (a {@code LargeLog} changes in place,
 * beside them, in the segment's {@code LargeLogTable}), so a decision on one appends no copy of it:
 * the table lists the changed log once, and each flush cycle, under the segment's lock just before
 * it swaps the buffer, appends one {@code LARGE} entry per listed log (partition, counter, expiry,
 * the log's current state; empty when the log left the table). A log is thus written at most once
 * per cycle however busy it is, in every-write mode before the caller's future completes (the entry
 * joins the buffer that future waits on), and at close by the last cycle. Snapshots write every live
 * log, copied under the segment's lock; recovery applies them last-write-wins per (partition,
 * counter), as for records.
 *
 * <p><b>Damage.</b> Every entry is {@code length:i32 crc32c:i32 payload} ({@link JournalFormat}). A
 * truncated or corrupt entry ends the reading of its file (its framing can no longer be trusted):
 * what came before is recovered, the rest is reported, and the store starts. Expired records are not loaded. Expiry
 * removals by the sweep are not journaled: recovery drops records that expired anyway.
 *
 * <p><b>Parts.</b> {@link JournalWriter} (appending, the flusher, rotation), {@link SnapshotWriter},
 * {@link JournalRecovery}, {@link JournalFormat} (the bytes on disk), {@link JournalBuffer}; this
 * class opens the directory (locked: one store at a time), recovers, and starts and stops the two
 * threads, which come from the {@link ThreadFactory} it is given: a test gives threads that run
 * nothing and drives the flushes and snapshots itself ({@link #flushNow}, {@link #snapshotNow}).
 *
 * <p><b>Clock.</b> Expiry is judged by the store's clock; the flush schedule is I/O pacing, on
 * {@link System#nanoTime()}. Tests: {@code JournalTest} (truncated and corrupted files, snapshots),
 * fcap-cli {@code DurableServeIT} (a real server killed with -9 under load).
 */
final class Journal implements AutoCloseable {
  static final long WRITE_EVERY_MS = 50;
  static final long MIN_SNAPSHOT_BYTES = 64L << 20;

  private final Durability durability;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final Recovery recovery;
  private final SnapshotWriter snapshots;
  private final JournalWriter writer;

  private Journal(Durability durability, Segment[] segments, Clock clock, MemoryStore store, ThreadFactory threads)
      throws IOException {
    this.durability = durability;
    Path dir = durability.dir();
    Files.createDirectories(dir);
    this.lockChannel = FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    this.lock = lockOrClose(lockChannel, dir);
    this.recovery = JournalRecovery.recover(dir, clock, store);
    this.snapshots = new SnapshotWriter(dir, segments, clock, threads);
    this.writer = new JournalWriter(durability, segments, snapshots, recovery.lastGeneration() + 1, threads);
    writer.start();
    snapshots.start();
  }

  private static FileLock lockOrClose(FileChannel channel, Path dir) throws IOException {
    FileLock l;
    try {
      l = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      l = null;
    }
    if (l == null) {
      channel.close();
      throw new IOException("state directory " + dir + " is in use by another fcap process (or store)");
    }
    return l;
  }

  /**
   * Recovers {@code store} from {@code durability.dir()} and starts journaling its writes, on two
   * threads made by {@code threads} (the flusher and the snapshot thread).
   */
  static Journal open(Durability durability, Segment[] segments, Clock clock, MemoryStore store,
      ThreadFactory threads) {
    try {
      return new Journal(durability, segments, clock, store, threads);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the store's state in " + durability.dir() + ": " + e.getMessage(), e);
    }
  }

  /**
   * What recovery found.
   *
   * @param partitions live partitions loaded
   * @param remembered remembered decisions loaded
   * @param entries entries read (snapshot and journals)
   * @param millis how long it took
   * @param problems damaged or unreadable files, one line each (empty when all was intact)
   * @param lastGeneration the highest file generation found (0: an empty directory)
   */
  record Recovery(long partitions, long remembered, long entries, long millis, List<String> problems, long lastGeneration) {}

  Recovery recovery() {
    return recovery;
  }

  Durability durability() {
    return durability;
  }

  boolean syncsEveryWrite() {
    return durability.syncsEveryWrite();
  }

  /**
   * Appends a write of segment {@code s}: {@code record} for {@code key}, or its removal if null.
   * Returns, in every-write mode, the future that completes once the entry is on disk; else null.
   * Segment lock held.
   */
  CompletableFuture<Void> append(int s, byte[] key, byte[] record) {
    return writer.append(s, key, record);
  }

  /**
   * Appends a decision of segment {@code s} as its step ({@link JournalDelta}) instead of its new
   * record: {@code request}, {@code sinceLatest} ms after the latest time of the record of checksum
   * {@code baseCrc} it was made on, giving one of checksum {@code resultCrc}. As {@link #append} otherwise.
   */
  CompletableFuture<Void> appendDelta(int s, ReusableRequest request, int baseCrc, int resultCrc, long sinceLatest) {
    return writer.appendDelta(s, request, baseCrc, resultCrc, sinceLatest);
  }

  /**
   * In every-write mode, the future that completes once segment {@code s}'s pending writes,
   * including its changed large logs, are on disk (a change that appended no entry of its own); else
   * null. Segment lock held.
   */
  CompletableFuture<Void> covering(int s) {
    return writer.covering(s);
  }

  /**
   * Throws while the journal cannot be written (a full disk, an I/O error): a write the store took
   * now would live in memory only, and a {@code kill -9} would forget it. Read before every write
   * and every read of the store, so that a probe of it fails as its writes do.
   */
  void checkWritable() {
    IOException failure = writer.failure();
    if (failure != null) {
      throw new StoreException(StoreException.Reason.UNAVAILABLE,
          "the store's journal cannot be written (" + failure.getMessage() + "); the store refuses until it can",
          failure);
    }
  }

  /** Asks for a snapshot at the flusher's next cycle, whatever the journal's size (tests, tools). */
  void requestSnapshot() {
    writer.requestSnapshot();
  }

  /**
   * Runs one forced flush cycle on the calling thread, rotating the journal if a snapshot is due:
   * only for a journal whose threads run nothing (the test drives them).
   */
  void flushNow() {
    writer.flush(true);
  }

  /** See {@link JournalWriter#wrapChannel}: tests only. */
  void wrapChannel(java.util.function.UnaryOperator<FileChannel> wrap) {
    writer.wrapChannel(wrap);
  }

  /** Writes the snapshot the last rotation asked for, on the calling thread (as {@link #flushNow}). */
  void snapshotNow() {
    snapshots.takeRequested();
  }

  /** Writes and forces everything pending, then stops (graceful close: nothing is lost). */
  @Override
  public void close() {
    writer.stop();
    snapshots.stop();
    try {
      writer.finish();
      snapshots.join();
      lock.release();
      lockChannel.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      LoggerFactory.getLogger(Journal.class).error("closing the journal: {}", e.toString());
    }
  }
}
