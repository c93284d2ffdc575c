package dev.fcap.store.memory;

import static dev.fcap.store.memory.JournalFormat.JOURNAL;
import static dev.fcap.store.memory.JournalFormat.PUT;
import static dev.fcap.store.memory.JournalFormat.REMOVE;

import dev.fcap.store.StoreException;
import dev.fcap.store.internal.ReusableRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal's appending side and its flusher thread: request threads append to their segment's
 * buffer; the flusher writes the buffers, forces the file on schedule and rotates it for snapshots.
 *
 * <p><b>A write that fails</b> (a full disk, an I/O error) must not cost what was already taken:
 * recovery reads a file up to its first damaged entry, so a torn entry followed by good ones would
 * hide every later write. The flusher therefore cuts the file back to its last whole cycle
 * ({@link #intact}) and keeps the cycle's entries in their segments' spare buffers, written first by
 * the next cycle, so nothing acknowledged leaves memory before it is on disk. While it fails,
 * {@link #failure} tells the store to refuse new writes ({@link MemoryStore}): a decision it cannot
 * journal is one a {@code kill -9} would forget. A failed force may have dropped pages the kernel
 * held, so it also asks for a snapshot once writes succeed again.
 */
final class JournalWriter {
  private static final Logger LOG = LoggerFactory.getLogger(JournalWriter.class);

  private final Durability durability;
  private final Path dir;
  private final Segment[] segments;
  private final SnapshotWriter snapshots;
  /** Each segment's entries not yet written; swapped with {@link #spare} by the flusher. */
  private final JournalBuffer[] active;
  private final JournalBuffer[] spare;
  private final Thread thread;
  private volatile boolean closing;
  private volatile boolean snapshotAsked;
  private volatile IOException failure;
  // the flusher's own, or the closing thread's once the flusher has stopped
  private FileChannel channel;
  private long generation;
  private long journalBytes;
  /** The channel's size after the last cycle that wrote without error: what a failed cycle cuts back to. */
  private long intact;
  /** A failed cycle could not cut the file back to {@link #intact}: the next one must, before writing. */
  private boolean torn;

  /** Opens journal {@code generation} (a new file); the flusher starts with {@link #start}. */
  JournalWriter(Durability durability, Segment[] segments, SnapshotWriter snapshots, long generation,
      ThreadFactory threads) throws IOException {
    this.durability = durability;
    this.dir = durability.dir();
    this.segments = segments;
    this.snapshots = snapshots;
    this.active = new JournalBuffer[segments.length];
    this.spare = new JournalBuffer[segments.length];
    for (int i = 0; i < segments.length; i++) {
      active[i] = new JournalBuffer(256);
      spare[i] = new JournalBuffer(256);
    }
    this.generation = generation;
    this.channel = JournalFormat.create(JournalFormat.journalPath(dir, generation), JOURNAL, generation);
    this.intact = channel.size();
    JournalFormat.syncDirectory(dir);
    this.thread = threads.newThread(this::loop);
    thread.setName("fcap-journal");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  // ---------------------------------------------------------------------------------------------
  // Appending (request threads, segment lock held)

  /** See {@link Journal#append}. */
  CompletableFuture<Void> append(int s, byte[] key, byte[] record) {
    active[s].add(record == null ? REMOVE : PUT, key, record); // the checksum is filled in by the flusher
    return covering(s);
  }

  /** See {@link Journal#appendDelta}. */
  CompletableFuture<Void> appendDelta(int s, ReusableRequest request, int baseCrc, int resultCrc, long sinceLatest) {
    active[s].addDelta(request, baseCrc, resultCrc, sinceLatest);
    return covering(s);
  }

  /** See {@link Journal#covering}. */
  CompletableFuture<Void> covering(int s) {
    if (!durability.syncsEveryWrite()) {
      return null;
    }
    JournalBuffer p = active[s];
    if (p.durable == null) {
      p.durable = new CompletableFuture<>();
      LockSupport.unpark(thread);
    }
    return p.durable;
  }

  /**
   * Has the flusher write through {@code wrap}'s channel instead of the file's own: a test's
   * failing disk, on a journal whose threads run nothing (the test drives the flushes).
   */
  void wrapChannel(java.util.function.UnaryOperator<FileChannel> wrap) {
    channel = wrap.apply(channel);
  }

  /** Why the journal cannot be written now, or null while it can (read on every write of the store). */
  IOException failure() {
    return failure;
  }

  /** Asks for a snapshot at the next cycle, whatever the journal's size. */
  void requestSnapshot() {
    snapshotAsked = true;
    LockSupport.unpark(thread);
  }

  // ---------------------------------------------------------------------------------------------
  // Flusher

  private void loop() {
    long syncEveryNanos = durability.syncEvery().toNanos();
    long lastSync = System.nanoTime();
    long waitNanos = durability.syncsEveryWrite() ? TimeUnit.MILLISECONDS.toNanos(1)
        : Math.min(TimeUnit.MILLISECONDS.toNanos(Journal.WRITE_EVERY_MS), syncEveryNanos);
    while (!closing) {
      LockSupport.parkNanos(this, waitNanos);
      long now = System.nanoTime();
      boolean force = durability.syncsEveryWrite() || now - lastSync >= syncEveryNanos;
      if (flush(force) && force) {
        lastSync = now;
      }
    }
  }

  /**
   * One cycle: writes what every segment has pending (forcing the file if {@code force}, or if
   * someone waits), then rotates the journal if a snapshot is due. Failures are logged, not thrown:
   * the next cycle tries again. Returns whether the cycle wrote.
   */
  boolean flush(boolean force) {
    try {
      cycle(force);
      if (!snapshots.running()
          && (snapshotAsked || journalBytes > Math.max(Journal.MIN_SNAPSHOT_BYTES, snapshots.lastBytes()))) {
        snapshotAsked = false;
        rotate();
      }
      return true;
    } catch (IOException | RuntimeException e) {
      if (failure == null) {
        LOG.error("journal write failed; the store refuses writes until the journal can be written again "
            + "(what was taken is kept in memory and written first): {}", e.toString());
      }
      failure = e instanceof IOException io ? io : new IOException(e);
      return false;
    }
  }

  /**
   * Writes what every segment has pending, a failed cycle's entries first; forces the file if asked
   * (always when someone waits). On failure the file is cut back to {@link #intact} and the entries
   * stay pending.
   */
  private void cycle(boolean force) throws IOException {
    List<JournalBuffer> taken = new ArrayList<>();
    for (int s = 0; s < segments.length; s++) {
      synchronized (segments[s]) {
        JournalBuffer p = active[s];
        p.addLargeLogs(segments[s].large.takeDirty(), false);
        if (spare[s].len > 0) {
          spare[s].append(p); // behind what a failed cycle left there
          p.clear();
        } else if (p.len == 0) {
          continue;
        } else {
          active[s] = spare[s];
          spare[s] = p;
        }
      }
      taken.add(spare[s]);
    }
    IOException error = null;
    boolean waited = false;
    boolean forcing = false;
    try {
      if (torn) {
        cutBack();
      }
      for (JournalBuffer p : taken) {
        p.sealAll();
        JournalFormat.writeFully(channel, ByteBuffer.wrap(p.data, 0, p.len));
        waited |= p.durable != null;
      }
      forcing = (force || waited) && !taken.isEmpty();
      if (forcing) {
        channel.force(false);
      }
      intact = channel.position();
    } catch (IOException e) {
      error = e;
    }
    if (error == null) {
      if (failure != null) {
        LOG.info("journal written again; the store takes writes again");
      }
      failure = null;
    } else {
      torn = true;
      snapshotAsked |= forcing; // a failed force may have lost pages of earlier cycles: write everything again
      try {
        cutBack();
      } catch (IOException e) {
        error.addSuppressed(e); // cut back before the next cycle writes
      }
    }
    for (JournalBuffer p : taken) {
      if (p.durable != null) {
        if (error == null) {
          p.durable.complete(null);
        } else {
          p.durable.completeExceptionally(new StoreException(StoreException.Reason.ERROR,
              "the store's journal could not be written: " + error.getMessage(), error));
          p.durable = null; // its waiters have their answer; its entries stay, to be written first
        }
      }
      if (error == null) {
        journalBytes += p.len;
        p.clear();
      }
    }
    if (error != null) {
      throw error;
    }
  }

  /** Drops whatever a failed cycle left past {@link #intact}, so the file holds only whole entries. */
  private void cutBack() throws IOException {
    channel.truncate(intact);
    channel.position(intact);
    torn = false;
  }

  /**
   * Closes journal N-1 (already forced), opens journal N and asks for snapshot N. Journal N is made
   * before N-1 is closed: if it cannot be, writes go on into N-1.
   */
  private void rotate() throws IOException {
    cycle(true);
    FileChannel next = JournalFormat.create(JournalFormat.journalPath(dir, generation + 1), JOURNAL, generation + 1);
    channel.close();
    channel = next;
    generation++;
    intact = channel.size();
    JournalFormat.syncDirectory(dir);
    journalBytes = 0;
    snapshots.request(generation);
  }

  /** Asks the flusher to stop after its current cycle. */
  void stop() {
    closing = true;
    LockSupport.unpark(thread);
  }

  /** Once the flusher has stopped: writes and forces everything pending, and closes the file. */
  void finish() throws InterruptedException {
    thread.join();
    try {
      cycle(true);
    } catch (IOException | RuntimeException e) {
      LOG.error("journal write failed at close; what was pending is not durable: {}", e.toString());
    }
    try {
      channel.close();
    } catch (IOException e) {
      LOG.error("closing the journal: {}", e.toString());
    }
  }
}
