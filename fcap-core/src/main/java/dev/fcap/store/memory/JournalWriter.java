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
        LOG.error("journal write failed; writes are not durable until it recovers: {}", e.toString());
      }
      failure = e instanceof IOException io ? io : new IOException(e);
      return false;
    }
  }

  /** Writes what every segment has pending; forces the file if asked (always when someone waits). */
  private void cycle(boolean force) throws IOException {
    List<JournalBuffer> taken = new ArrayList<>();
    for (int s = 0; s < segments.length; s++) {
      synchronized (segments[s]) {
        JournalBuffer p = active[s];
        p.addLargeLogs(segments[s].large.takeDirty(), false);
        if (p.len == 0) {
          continue;
        }
        active[s] = spare[s];
        spare[s] = p;
      }
      taken.add(spare[s]);
    }
    IOException error = null;
    boolean waited = false;
    try {
      for (JournalBuffer p : taken) {
        p.sealAll();
        JournalFormat.writeFully(channel, ByteBuffer.wrap(p.data, 0, p.len));
        journalBytes += p.len;
        waited |= p.durable != null;
      }
      if ((force || waited) && !taken.isEmpty()) {
        channel.force(false);
      }
      failure = null;
    } catch (IOException e) {
      error = e;
    }
    for (JournalBuffer p : taken) {
      if (p.durable != null) {
        if (error == null) {
          p.durable.complete(null);
        } else {
          p.durable.completeExceptionally(new StoreException(StoreException.Reason.ERROR,
              "the store's journal could not be written: " + error.getMessage(), error));
        }
      }
      p.clear();
    }
    if (error != null) {
      throw error;
    }
  }

  /** Closes journal N-1 (already forced), opens journal N and asks for snapshot N. */
  private void rotate() throws IOException {
    cycle(true);
    channel.close();
    generation++;
    channel = JournalFormat.create(JournalFormat.journalPath(dir, generation), JOURNAL, generation);
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
