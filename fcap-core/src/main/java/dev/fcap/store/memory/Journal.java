package dev.fcap.store.memory;

import dev.fcap.store.Clock;
import dev.fcap.store.StoreException;
import dev.fcap.store.Varint;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a {@link MemoryStore} durable: an append-only journal of the partition records each write
 * produces, and snapshots of the segments that truncate it.
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
 * version ({@link PartitionRecord#FORMAT}) they were written in.
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
 * <p><b>Damage.</b> Every entry is {@code length:i32 crc32c:i32 payload}. A truncated or corrupt
 * entry ends the reading of its file (its framing can no longer be trusted): what came before is
 * recovered, the rest is reported, and the store starts. Expired records are not loaded. Expiry
 * removals by the sweep are not journaled: recovery drops records that expired anyway.
 *
 * <p><b>Clock.</b> Expiry is judged by the store's clock; the flush schedule is I/O pacing, on
 * {@link System#nanoTime()}. Tests: {@code JournalTest} (truncated and corrupted files, snapshots),
 * fcap-cli {@code DurableServeIT} (a real server killed with -9 under load).
 */
final class Journal implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
  /**
   * Version of the file framing (header and entries); the record layout has its own. 2 added
   * {@code LARGE} entries; files of version 1 are still read, and a version-1 reader skips these.
   */
  static final int FILE_VERSION = 2;
  static final int HEADER = 16;
  static final long WRITE_EVERY_MS = 50;
  static final long MIN_SNAPSHOT_BYTES = 64L << 20;
  private static final byte[] MAGIC = {'F', 'C', 'A', 'P'};
  private static final byte JOURNAL = 'J';
  private static final byte SNAPSHOT = 'S';
  private static final byte PUT = 1;
  private static final byte REMOVE = 2;
  private static final byte END = 3;
  /** A large sliding log: partition, counter, expiresAt, the log in {@code LargeLog.encode()} form (empty: gone). */
  private static final byte LARGE = 4;
  private static final Pattern FILE = Pattern.compile("(journal|snapshot)-(\\d{10})\\.(log|bin)");

  /** A segment's entries not yet written; touched under the segment's lock, or by the flusher once swapped out. */
  private static final class Pending {
    byte[] data = new byte[256];
    int len;
    CompletableFuture<Void> durable;

    int reserve(int n) {
      if (len + n > data.length) {
        data = Arrays.copyOf(data, Math.max(data.length * 2, len + n));
      }
      int at = len;
      len += n;
      return at;
    }
  }

  private final Durability durability;
  private final Path dir;
  private final Segment[] segments;
  private final Clock clock;
  private final Pending[] active;
  private final Pending[] spare;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final Recovery recovery;
  private final Thread flusher;
  private final Thread snapshotter;
  private final Object snapshotSignal = new Object();
  private volatile boolean closing;
  /** Generation of the snapshot the snapshotter should take next; 0: none. Guarded by snapshotSignal. */
  private long snapshotRequested;
  private volatile boolean snapshotRunning;
  private volatile boolean snapshotAsked;
  private volatile long lastSnapshotBytes;
  private volatile IOException failure;
  // flusher thread only
  private FileChannel channel;
  private long generation;
  private long journalBytes;

  private Journal(Durability durability, Segment[] segments, Clock clock, MemoryStore store) throws IOException {
    this.durability = durability;
    this.dir = durability.dir();
    this.segments = segments;
    this.clock = clock;
    this.active = new Pending[segments.length];
    this.spare = new Pending[segments.length];
    for (int i = 0; i < segments.length; i++) {
      active[i] = new Pending();
      spare[i] = new Pending();
    }
    Files.createDirectories(dir);
    this.lockChannel = FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock l;
    try {
      l = lockChannel.tryLock();
    } catch (OverlappingFileLockException e) {
      l = null;
    }
    if (l == null) {
      lockChannel.close();
      throw new IOException("state directory " + dir + " is in use by another fcap process (or store)");
    }
    this.lock = l;
    this.recovery = recover(store);
    this.generation = recovery.lastGeneration() + 1;
    this.channel = create(journalPath(generation), JOURNAL, generation);
    syncDirectory();
    this.flusher = new Thread(this::flushLoop, "fcap-journal");
    flusher.setDaemon(true);
    this.snapshotter = new Thread(this::snapshotLoop, "fcap-snapshot");
    snapshotter.setDaemon(true);
    flusher.start();
    snapshotter.start();
  }

  /** Recovers {@code store} from {@code durability.dir()} and starts journaling its writes. */
  static Journal open(Durability durability, Segment[] segments, Clock clock, MemoryStore store) {
    try {
      return new Journal(durability, segments, clock, store);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the store's state in " + durability.dir() + ": " + e.getMessage(), e);
    }
  }

  Recovery recovery() {
    return recovery;
  }

  Durability durability() {
    return durability;
  }

  boolean syncsEveryWrite() {
    return durability.syncsEveryWrite();
  }

  // ---------------------------------------------------------------------------------------------
  // Appending (request threads, segment lock held)

  /**
   * Appends a write of segment {@code s}: {@code record} for {@code key}, or its removal if null.
   * Returns, in every-write mode, the future that completes once the entry is on disk; else null.
   */
  CompletableFuture<Void> append(int s, byte[] key, byte[] record) {
    Pending p = active[s];
    int payload = 1 + Varint.size(key.length) + key.length + (record == null ? 0 : record.length);
    int at = p.reserve(8 + payload);
    byte[] d = p.data;
    putInt(d, at, payload);
    // the checksum at at + 4 is filled in by the flusher
    int pos = at + 8;
    d[pos++] = record == null ? REMOVE : PUT;
    pos = Varint.write(d, pos, key.length);
    System.arraycopy(key, 0, d, pos, key.length);
    if (record != null) {
      System.arraycopy(record, 0, d, pos + key.length, record.length);
    }
    return covering(s);
  }

  /**
   * In every-write mode, the future that completes once segment {@code s}'s pending writes,
   * including its changed large logs, are on disk (a change that appended no entry of its own); else
   * null. Segment lock held.
   */
  CompletableFuture<Void> covering(int s) {
    if (!durability.syncsEveryWrite()) {
      return null;
    }
    Pending p = active[s];
    if (p.durable == null) {
      p.durable = new CompletableFuture<>();
      LockSupport.unpark(flusher);
    }
    return p.durable;
  }

  // ---------------------------------------------------------------------------------------------
  // Flusher

  private void flushLoop() {
    long syncEveryNanos = durability.syncEvery().toNanos();
    long lastSync = System.nanoTime();
    long waitNanos = durability.syncsEveryWrite() ? TimeUnit.MILLISECONDS.toNanos(1)
        : Math.min(TimeUnit.MILLISECONDS.toNanos(WRITE_EVERY_MS), syncEveryNanos);
    while (true) {
      boolean last = closing;
      if (!last) {
        LockSupport.parkNanos(this, waitNanos);
      }
      long now = System.nanoTime();
      boolean force = last || durability.syncsEveryWrite() || now - lastSync >= syncEveryNanos;
      try {
        cycle(force);
        if (force) {
          lastSync = now;
        }
        if (!last && !snapshotRunning && (snapshotAsked || journalBytes > Math.max(MIN_SNAPSHOT_BYTES, lastSnapshotBytes))) {
          snapshotAsked = false;
          rotate();
        }
      } catch (IOException | RuntimeException e) {
        if (failure == null) {
          LOG.error("journal write failed; writes are not durable until it recovers: {}", e.toString());
        }
        failure = e instanceof IOException io ? io : new IOException(e);
      }
      if (last) {
        return;
      }
    }
  }

  /** Writes what every segment has pending; forces the file if asked (always when someone waits). */
  private void cycle(boolean force) throws IOException {
    List<Pending> taken = new ArrayList<>();
    for (int s = 0; s < segments.length; s++) {
      synchronized (segments[s]) {
        Pending p = active[s];
        appendLargeLogs(segments[s].large.takeDirty(), p, false);
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
      for (Pending p : taken) {
        sealChecksums(p.data, p.len);
        writeFully(channel, ByteBuffer.wrap(p.data, 0, p.len));
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
    for (Pending p : taken) {
      if (p.durable != null) {
        if (error == null) {
          p.durable.complete(null);
        } else {
          p.durable.completeExceptionally(new StoreException(StoreException.Reason.ERROR,
              "the store's journal could not be written: " + error.getMessage(), error));
        }
      }
      p.durable = null;
      p.len = 0;
      if (p.data.length > (1 << 20)) {
        p.data = new byte[256]; // a burst grew it; give the memory back
      }
    }
    if (error != null) {
      throw error;
    }
  }

  /**
   * Appends the current state of each changed large log (its removal if it left the table) to
   * {@code p}: once per flush, however many decisions changed it. Under the segment's lock, so the
   * state is the one the last of those decisions left, and an every-write caller's future on
   * {@code p} covers it. Sealed at once for snapshots; the flusher seals journal buffers itself.
   */
  private static void appendLargeLogs(List<LargeLogTable.Held> logs, Pending p, boolean seal) {
    for (LargeLogTable.Held h : logs) {
      byte[] state = h.gone ? null : h.log.encode();
      if (state == null) {
        state = new byte[0]; // gone, or emptied in place by pruning: nothing to load
      }
      int payload = 1 + Varint.size(h.partition.length) + h.partition.length + Varint.size(h.counter.length)
          + h.counter.length + 8 + state.length;
      int at = p.reserve(8 + payload);
      byte[] d = p.data;
      putInt(d, at, payload);
      int pos = at + 8;
      d[pos++] = LARGE;
      pos = Varint.write(d, pos, h.partition.length);
      System.arraycopy(h.partition, 0, d, pos, h.partition.length);
      pos = Varint.write(d, pos + h.partition.length, h.counter.length);
      System.arraycopy(h.counter, 0, d, pos, h.counter.length);
      pos += h.counter.length;
      putLong(d, pos, h.expiresAt);
      System.arraycopy(state, 0, d, pos + 8, state.length);
      if (seal) {
        seal(d, at);
      }
    }
  }

  /** Closes journal N-1 (already forced), opens journal N and asks for snapshot N. */
  private void rotate() throws IOException {
    cycle(true);
    channel.close();
    generation++;
    channel = create(journalPath(generation), JOURNAL, generation);
    syncDirectory();
    journalBytes = 0;
    synchronized (snapshotSignal) {
      snapshotRunning = true;
      snapshotRequested = generation;
      snapshotSignal.notifyAll();
    }
  }

  private static void sealChecksums(byte[] d, int len) {
    for (int at = 0; at < len; at += 8 + getInt(d, at)) {
      seal(d, at);
    }
  }

  /** Fills in the checksum of the entry at {@code at}. */
  private static void seal(byte[] d, int at) {
    CRC32C crc = new CRC32C();
    crc.update(d, at + 8, getInt(d, at));
    putInt(d, at + 4, (int) crc.getValue());
  }

  // ---------------------------------------------------------------------------------------------
  // Snapshots

  private void snapshotLoop() {
    while (true) {
      long gen;
      synchronized (snapshotSignal) {
        while (snapshotRequested == 0 && !closing) {
          try {
            snapshotSignal.wait();
          } catch (InterruptedException e) {
            return;
          }
        }
        if (snapshotRequested == 0) {
          return;
        }
        gen = snapshotRequested;
        snapshotRequested = 0;
      }
      try {
        long started = System.nanoTime();
        long[] written = snapshot(gen);
        lastSnapshotBytes = written[1];
        LOG.info("snapshot {} of the store's state: {} partitions, {} bytes, in {} ms", gen, written[0], written[1],
            (System.nanoTime() - started) / 1_000_000);
      } catch (SnapshotAbandoned e) {
        LOG.info("snapshot {} abandoned at shutdown (the journals hold everything)", gen);
      } catch (IOException | RuntimeException e) {
        LOG.error("snapshot {} failed (the journals stay, nothing is lost): {}", gen, e.toString());
      } finally {
        snapshotRunning = false;
      }
    }
  }

  /** Writes snapshot {@code gen}, then deletes what it supersedes; returns {partitions, bytes}. */
  long[] snapshot(long gen) throws IOException {
    Path tmp = dir.resolve(String.format("snapshot-%010d.tmp", gen));
    long count = 0;
    long bytes;
    long now = clock.millis();
    try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
        StandardOpenOption.WRITE)) {
      writeFully(out, ByteBuffer.wrap(header(SNAPSHOT, gen)));
      Pending buf = new Pending();
      buf.data = new byte[1 << 20];
      for (Segment segment : segments) {
        if (closing) {
          throw new SnapshotAbandoned(); // a shutdown does not wait for it: the journals hold everything
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
          appendLargeLogs(live, buf, true);
        }
        count += countEntries(buf.data, largeFrom, buf.len);
        for (byte[] r : records) {
          if (r != null && PartitionRecord.expiresAt(r) > now) {
            entry(buf, PUT, PartitionRecord.key(r), r);
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
      entry(buf, END, end, null);
      writeFully(out, ByteBuffer.wrap(buf.data, 0, buf.len));
      out.force(true);
      bytes = out.size();
    }
    Files.move(tmp, snapshotPath(gen), StandardCopyOption.ATOMIC_MOVE);
    syncDirectory();
    for (Path p : files().values()) {
      long g = generationOf(p);
      if (g < gen) {
        Files.deleteIfExists(p);
      }
    }
    return new long[] {count, bytes};
  }

  /** A snapshot stopped because the store is closing; its temporary file is deleted at the next start. */
  private static final class SnapshotAbandoned extends RuntimeException {
    private static final long serialVersionUID = 1L;

    SnapshotAbandoned() {
      super(null, null, false, false);
    }
  }

  /** Appends one sealed entry to {@code buf} (snapshots). */
  private static void entry(Pending buf, byte type, byte[] key, byte[] record) {
    int payload = 1 + Varint.size(key.length) + key.length + (record == null ? 0 : record.length);
    int at = buf.reserve(8 + payload);
    byte[] d = buf.data;
    putInt(d, at, payload);
    int pos = at + 8;
    d[pos++] = type;
    pos = Varint.write(d, pos, key.length);
    System.arraycopy(key, 0, d, pos, key.length);
    if (record != null) {
      System.arraycopy(record, 0, d, pos + key.length, record.length);
    }
    seal(d, at);
  }

  private static long countEntries(byte[] d, int from, int to) {
    long n = 0;
    for (int at = from; at < to; at += 8 + getInt(d, at)) {
      n++;
    }
    return n;
  }

  // ---------------------------------------------------------------------------------------------
  // Recovery

  /**
   * What recovery found.
   *
   * @param partitions live partitions loaded
   * @param entries entries read (snapshot and journals)
   * @param millis how long it took
   * @param problems damaged or unreadable files, one line each (empty when all was intact)
   * @param lastGeneration the highest file generation found (0: an empty directory)
   */
  record Recovery(long partitions, long remembered, long entries, long millis, List<String> problems, long lastGeneration) {}

  private Recovery recover(MemoryStore store) throws IOException {
    long started = System.nanoTime();
    long now = clock.millis();
    TreeMap<Long, Path> snapshots = new TreeMap<>();
    TreeMap<Long, Path> journals = new TreeMap<>();
    long last = 0;
    for (Path p : files().values()) {
      long g = generationOf(p);
      last = Math.max(last, g);
      (p.getFileName().toString().startsWith("snapshot") ? snapshots : journals).put(g, p);
    }
    try (var tmps = Files.newDirectoryStream(dir, "snapshot-*.tmp")) {
      for (Path p : tmps) {
        Files.deleteIfExists(p); // a snapshot cut off before its rename: the journals still hold it all
      }
    }
    List<String> problems = new ArrayList<>();
    long entries = 0;
    long from = 0;
    if (!snapshots.isEmpty()) {
      var newest = snapshots.lastEntry();
      from = newest.getKey();
      entries += read(newest.getValue(), SNAPSHOT, store, now, problems);
    }
    for (var j : journals.tailMap(from, true).entrySet()) {
      entries += read(j.getValue(), JOURNAL, store, now, problems);
    }
    for (String p : problems) {
      LOG.warn("store state: {}", p);
    }
    return new Recovery(store.size(), store.remembered(), entries, (System.nanoTime() - started) / 1_000_000, List.copyOf(problems), last);
  }

  /** Replays one file into the store; returns the entries read, adds what was damaged to {@code problems}. */
  private long read(Path file, byte kind, MemoryStore store, long now, List<String> problems) throws IOException {
    long size = Files.size(file);
    String name = file.getFileName().toString();
    long entries = 0;
    try (InputStream raw = Files.newInputStream(file);
        DataInputStream in = new DataInputStream(new BufferedInputStream(raw, 1 << 16))) {
      byte[] head = new byte[HEADER];
      try {
        in.readFully(head);
      } catch (EOFException e) {
        problems.add(name + ": shorter than its header (" + size + " bytes); ignored");
        return 0;
      }
      String bad = checkHeader(head, kind);
      if (bad != null) {
        problems.add(name + ": " + bad + "; ignored");
        return 0;
      }
      long pos = HEADER;
      byte[] payload = new byte[4096];
      CRC32C crc = new CRC32C();
      boolean ended = false;
      while (pos < size) {
        if (size - pos < 8) {
          problems.add(name + ": truncated entry at byte " + pos + " (the last " + (size - pos)
              + " bytes ignored; everything before is recovered)");
          break;
        }
        int len = in.readInt();
        int sum = in.readInt();
        if (len < 2 || len > size - pos - 8) {
          problems.add(name + ": " + (len >= 2 && len <= Integer.MAX_VALUE ? "truncated" : "corrupt") + " entry at byte "
              + pos + " (the last " + (size - pos) + " bytes ignored; everything before is recovered)");
          break;
        }
        if (payload.length < len) {
          payload = new byte[Math.max(len, payload.length * 2)];
        }
        in.readFully(payload, 0, len);
        crc.reset();
        crc.update(payload, 0, len);
        if ((int) crc.getValue() != sum) {
          problems.add(name + ": corrupt entry at byte " + pos + " (checksum mismatch; the last " + (size - pos)
              + " bytes ignored; everything before is recovered)");
          break;
        }
        pos += 8 + len;
        entries++;
        if (payload[0] == END) {
          ended = true;
          break;
        }
        apply(payload, len, store, now, getInt(head, 8));
      }
      if (kind == SNAPSHOT && !ended) {
        problems.add(name + ": the snapshot has no end marker: it is incomplete");
      }
    }
    return entries;
  }

  private static void apply(byte[] payload, int len, MemoryStore store, long now, int format) {
    int keyLen = Varint.read(payload, 1);
    int keyAt = 1 + Varint.size(keyLen);
    byte[] key = Arrays.copyOfRange(payload, keyAt, keyAt + keyLen);
    if (payload[0] == LARGE) {
      int counterLen = Varint.read(payload, keyAt + keyLen);
      int counterAt = keyAt + keyLen + Varint.size(counterLen);
      byte[] counter = Arrays.copyOfRange(payload, counterAt, counterAt + counterLen);
      int expiresAt = counterAt + counterLen;
      long expires = (long) getInt(payload, expiresAt) << 32 | (getInt(payload, expiresAt + 4) & 0xFFFF_FFFFL);
      byte[] state = Arrays.copyOfRange(payload, expiresAt + 8, len);
      // empty: the log left the table; expired: nothing to load (either way an older state is dropped)
      store.restoreLarge(key, counter, state.length == 0 || expires <= now ? null : state, expires);
      return;
    }
    byte[] record = null;
    if (payload[0] == PUT) {
      record = Arrays.copyOfRange(payload, keyAt + keyLen, len);
      if (format == 1) {
        record = PartitionRecord.fromLayout1(record);
      }
      if (format <= 2) {
        record = PartitionRecord.fromLayout2(record);
      }
      if (PartitionRecord.expiresAt(record) <= now) {
        record = null; // the newest state of the partition has expired: nothing to load
      }
    }
    store.restore(key, record);
  }

  private static String checkHeader(byte[] h, byte kind) {
    if (!Arrays.equals(h, 0, 4, MAGIC, 0, 4) || h[4] != kind) {
      return "not a fcap " + (kind == SNAPSHOT ? "snapshot" : "journal") + " (bad magic)";
    }
    if (h[5] != FILE_VERSION && h[5] != FILE_VERSION - 1) {
      // format 1 is format 2 without LARGE entries: read as is, so an upgrade keeps the counts
      return "written in file format " + h[5] + ", this version reads " + (FILE_VERSION - 1) + " and " + FILE_VERSION;
    }
    int format = getInt(h, 8);
    if (format < 1 || format > PartitionRecord.FORMAT) {
      // layout 1 is layout 2 without the partition's time, layout 2 is layout 3 with u8 tail lengths
      // in its remembered decisions: converted as read, so an upgrade keeps the counts and the ids
      return "holds records in layout " + format + ", this version reads 1 to " + PartitionRecord.FORMAT;
    }
    return null;
  }

  private static byte[] header(byte kind, long gen) {
    byte[] h = new byte[HEADER];
    System.arraycopy(MAGIC, 0, h, 0, 4);
    h[4] = kind;
    h[5] = FILE_VERSION;
    putInt(h, 8, PartitionRecord.FORMAT);
    putInt(h, 12, (int) gen);
    return h;
  }

  // ---------------------------------------------------------------------------------------------
  // Files

  private FileChannel create(Path path, byte kind, long gen) throws IOException {
    FileChannel c = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    writeFully(c, ByteBuffer.wrap(header(kind, gen)));
    c.force(true);
    return c;
  }

  private TreeMap<String, Path> files() throws IOException {
    TreeMap<String, Path> out = new TreeMap<>();
    try (var stream = Files.newDirectoryStream(dir)) {
      for (Path p : stream) {
        if (FILE.matcher(p.getFileName().toString()).matches()) {
          out.put(p.getFileName().toString(), p);
        }
      }
    }
    return out;
  }

  private static long generationOf(Path p) {
    Matcher m = FILE.matcher(p.getFileName().toString());
    if (!m.matches()) {
      throw new IllegalArgumentException(p.toString());
    }
    return Long.parseLong(m.group(2));
  }

  private Path journalPath(long gen) {
    return dir.resolve(String.format("journal-%010d.log", gen));
  }

  private Path snapshotPath(long gen) {
    return dir.resolve(String.format("snapshot-%010d.bin", gen));
  }

  private void syncDirectory() {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // some file systems cannot force a directory; the files themselves are forced
    }
  }

  private static void writeFully(FileChannel c, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      c.write(b);
    }
  }

  private static void putInt(byte[] d, int at, int v) {
    d[at] = (byte) (v >>> 24);
    d[at + 1] = (byte) (v >>> 16);
    d[at + 2] = (byte) (v >>> 8);
    d[at + 3] = (byte) v;
  }

  private static void putLong(byte[] d, int at, long v) {
    putInt(d, at, (int) (v >>> 32));
    putInt(d, at + 4, (int) v);
  }

  private static int getInt(byte[] d, int at) {
    return (d[at] & 0xff) << 24 | (d[at + 1] & 0xff) << 16 | (d[at + 2] & 0xff) << 8 | (d[at + 3] & 0xff);
  }

  /** Asks for a snapshot at the flusher's next cycle, whatever the journal's size (tests, tools). */
  void requestSnapshot() {
    snapshotAsked = true;
    LockSupport.unpark(flusher);
  }

  /** Writes and forces everything pending, then stops (graceful close: nothing is lost). */
  @Override
  public void close() {
    closing = true;
    LockSupport.unpark(flusher);
    synchronized (snapshotSignal) {
      snapshotSignal.notifyAll();
    }
    try {
      flusher.join();
      snapshotter.join();
      channel.close();
      lock.release();
      lockChannel.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      LOG.error("closing the journal: {}", e.toString());
    }
  }
}
