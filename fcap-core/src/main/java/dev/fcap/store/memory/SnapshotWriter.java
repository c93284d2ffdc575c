package dev.fcap.store.memory;

import static dev.fcap.store.memory.JournalFormat.END;
import static dev.fcap.store.memory.JournalFormat.PUT;
import static dev.fcap.store.memory.JournalFormat.SNAPSHOT;
import static dev.fcap.store.memory.JournalFormat.putLong;
import static dev.fcap.store.memory.JournalFormat.seal;
import static dev.fcap.store.memory.JournalFormat.writeFully;

import dev.fcap.time.Clock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The snapshot thread: when the writer has opened journal {@code N}, copies every segment's live
 * records and large logs into snapshot {@code N}, then deletes the older files it supersedes.
 */
final class SnapshotWriter {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotWriter.class);

  private final Path dir;
  private final Segment[] segments;
  private final Clock clock;
  private final Thread thread;
  private final Object signal = new Object();
  /** Generation of the snapshot to take next; 0: none. Guarded by {@link #signal}. */
  private long requested;
  private volatile boolean running;
  private volatile boolean closing;
  private volatile long lastBytes;

  SnapshotWriter(Path dir, Segment[] segments, Clock clock, ThreadFactory threads) {
    this.dir = dir;
    this.segments = segments;
    this.clock = clock;
    this.thread = threads.newThread(this::loop);
    thread.setName("fcap-snapshot");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Whether a snapshot is asked for or being written (the writer asks for no second one meanwhile). */
  boolean running() {
    return running;
  }

  /** The size of the last snapshot written (the journal must outgrow it before the next). */
  long lastBytes() {
    return lastBytes;
  }

  /** Asks for snapshot {@code gen}: journal {@code gen} has just been opened. */
  void request(long gen) {
    synchronized (signal) {
      running = true;
      requested = gen;
      signal.notifyAll();
    }
  }

  private void loop() {
    while (true) {
      long gen;
      synchronized (signal) {
        while (requested == 0 && !closing) {
          try {
            signal.wait();
          } catch (InterruptedException e) {
            return;
          }
        }
        if (requested == 0) {
          return;
        }
        gen = requested;
        requested = 0;
      }
      take(gen);
    }
  }

  /** Takes the snapshot asked for, if any, on the calling thread (a journal whose threads run nothing). */
  void takeRequested() {
    long gen;
    synchronized (signal) {
      gen = requested;
      requested = 0;
    }
    if (gen != 0) {
      take(gen);
    }
  }

  private void take(long gen) {
    try {
      long started = System.nanoTime();
      long[] written = write(gen);
      lastBytes = written[1];
      LOG.info("snapshot {} of the store's state: {} partitions, {} bytes, in {} ms", gen, written[0], written[1],
          (System.nanoTime() - started) / 1_000_000);
    } catch (Abandoned e) {
      LOG.info("snapshot {} abandoned at shutdown (the journals hold everything)", gen);
    } catch (IOException | RuntimeException e) {
      LOG.error("snapshot {} failed (the journals stay, nothing is lost): {}", gen, e.toString());
    } finally {
      running = false;
    }
  }

  /** Writes snapshot {@code gen}, then deletes what it supersedes; returns {partitions, bytes}. */
  private long[] write(long gen) throws IOException {
    Path tmp = dir.resolve(String.format("snapshot-%010d.tmp", gen));
    long count = 0;
    long bytes;
    long now = clock.millis();
    try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
        StandardOpenOption.WRITE)) {
      writeFully(out, ByteBuffer.wrap(JournalFormat.header(SNAPSHOT, gen)));
      JournalBuffer buf = new JournalBuffer(1 << 20);
      for (Segment segment : segments) {
        if (closing) {
          throw new Abandoned(); // a shutdown does not wait for it: the journals hold everything
        }
        byte[][] records;
        int largeFrom = buf.len;
        synchronized (segment) {
          records = segment.records.clone();
          // large logs change in place: their state is copied under the lock (a log changed after
          // this is listed dirty and lands in journal N, like a record)
          List<LargeLogTable.Held> live = new ArrayList<>();
          for (LargeLogTable.Held h : segment.large.all()) {
            if (h.expiresAt > now) {
              live.add(h);
            }
          }
          buf.addLargeLogs(live, true);
        }
        count += JournalFormat.countEntries(buf.data, largeFrom, buf.len);
        for (byte[] r : records) {
          if (r != null && PartitionRecord.expiresAt(r) > now) {
            seal(buf.data, buf.add(PUT, PartitionRecord.key(r), r));
            count++;
            if (buf.len >= (1 << 20) - 4096) {
              writeFully(out, ByteBuffer.wrap(buf.data, 0, buf.len));
              buf.len = 0;
            }
          }
        }
      }
      byte[] end = new byte[8];
      putLong(end, 0, count);
      seal(buf.data, buf.add(END, end, null));
      writeFully(out, ByteBuffer.wrap(buf.data, 0, buf.len));
      out.force(true);
      bytes = out.size();
    }
    Files.move(tmp, JournalFormat.snapshotPath(dir, gen), StandardCopyOption.ATOMIC_MOVE);
    JournalFormat.syncDirectory(dir);
    for (Path p : JournalFormat.files(dir).values()) {
      if (JournalFormat.generationOf(p) < gen) {
        Files.deleteIfExists(p);
      }
    }
    return new long[] {count, bytes};
  }

  /** Asks the thread to stop: a snapshot being written is abandoned. */
  void stop() {
    closing = true;
    synchronized (signal) {
      signal.notifyAll();
    }
  }

  void join() throws InterruptedException {
    thread.join();
  }

  /** A snapshot stopped because the store is closing; its temporary file is deleted at the next start. */
  private static final class Abandoned extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Abandoned() {
      super(null, null, false, false);
    }
  }
}
