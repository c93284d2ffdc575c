package dev.fcap.store.memory;

import static dev.fcap.store.memory.JournalFormat.DELTA;
import static dev.fcap.store.memory.JournalFormat.END;
import static dev.fcap.store.memory.JournalFormat.HEADER;
import static dev.fcap.store.memory.JournalFormat.JOURNAL;
import static dev.fcap.store.memory.JournalFormat.LARGE;
import static dev.fcap.store.memory.JournalFormat.PUT;
import static dev.fcap.store.memory.JournalFormat.SNAPSHOT;

import dev.fcap.store.Varint;
import dev.fcap.time.Clock;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.TreeMap;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovery at start: replays the newest snapshot, then the journals from its generation on, into
 * the store, in file order, last write wins; a damaged file's intact prefix counts, the rest is reported.
 *
 * <p>A {@link JournalFormat#DELTA} entry replays a decision's step on the partition's record
 * ({@link MemoryStore#replay}) if that record is the one the step was made on (its checksum), and
 * checks the record it gives; one whose result is already held is skipped. In the journal of the
 * snapshot's own generation a step may precede the snapshot's copy of its partition, so the record
 * held may be later than both: such a step is skipped too; in any later journal a step that does not
 * apply, or gives another record, is reported. Records that expired by now are dropped from the store
 * but kept aside while recovering, as the base of a later step (the store made it before they expired).
 */
final class JournalRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(JournalRecovery.class);

  private final Path dir;
  private final MemoryStore store;
  private final long now;
  private final List<String> problems = new ArrayList<>();
  /** Records dropped as expired by now, by partition: a later step of the journal may have been made on one. */
  private final HashMap<ByteBuffer, byte[]> expired = new HashMap<>();
  /** The generation of the snapshot read (-1: none): its journal may hold steps the snapshot already has. */
  private long snapshotGeneration = -1;
  /** Of the file being read: steps skipped because they did not apply, and steps whose result differed. */
  private long stale;
  private long differed;

  private JournalRecovery(Path dir, MemoryStore store, long now) {
    this.dir = dir;
    this.store = store;
    this.now = now;
  }

  /** Loads what {@code dir} holds into {@code store}; expiry is judged at {@code clock}'s time. */
  static Journal.Recovery recover(Path dir, Clock clock, MemoryStore store) throws IOException {
    return new JournalRecovery(dir, store, clock.millis()).run();
  }

  private Journal.Recovery run() throws IOException {
    long started = System.nanoTime();
    TreeMap<Long, Path> snapshots = new TreeMap<>();
    TreeMap<Long, Path> journals = new TreeMap<>();
    long last = 0;
    for (Path p : JournalFormat.files(dir).values()) {
      long g = JournalFormat.generationOf(p);
      last = Math.max(last, g);
      (JournalFormat.isSnapshot(p) ? snapshots : journals).put(g, p);
    }
    try (var tmps = Files.newDirectoryStream(dir, "snapshot-*.tmp")) {
      for (Path p : tmps) {
        Files.deleteIfExists(p); // a snapshot cut off before its rename: the journals still hold it all
      }
    }
    long entries = 0;
    long from = 0;
    if (!snapshots.isEmpty()) {
      var newest = snapshots.lastEntry();
      from = newest.getKey();
      snapshotGeneration = from;
      entries += read(newest.getValue(), SNAPSHOT);
    }
    for (var j : journals.tailMap(from, true).entrySet()) {
      stale = 0;
      differed = 0;
      entries += read(j.getValue(), JOURNAL);
      String name = j.getValue().getFileName().toString();
      if (stale > 0 && j.getKey() != snapshotGeneration) {
        problems.add(name + ": " + stale + " decision steps did not apply to their partition's record (skipped)");
      }
      if (differed > 0) {
        problems.add(name + ": " + differed + " decision steps replayed to another record than they made");
      }
    }
    expired.clear();
    for (String p : problems) {
      LOG.warn("store state: {}", p);
    }
    return new Journal.Recovery(store.size(), store.remembered(), entries, (System.nanoTime() - started) / 1_000_000,
        List.copyOf(problems), last);
  }

  /** Replays one file into the store; returns the entries read, adds what was damaged to {@link #problems}. */
  private long read(Path file, byte kind) throws IOException {
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
      String bad = JournalFormat.checkHeader(head, kind);
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
        apply(payload, len);
      }
      if (kind == SNAPSHOT && !ended) {
        problems.add(name + ": the snapshot has no end marker: it is incomplete");
      }
    }
    return entries;
  }

  private void apply(byte[] payload, int len) {
    if (payload[0] == DELTA) {
      replay(JournalDelta.read(payload, len));
      return;
    }
    int keyLen = Varint.read(payload, 1);
    int keyAt = 1 + Varint.size(keyLen);
    byte[] key = Arrays.copyOfRange(payload, keyAt, keyAt + keyLen);
    if (payload[0] == LARGE) {
      int counterLen = Varint.read(payload, keyAt + keyLen);
      int counterAt = keyAt + keyLen + Varint.size(counterLen);
      byte[] counter = Arrays.copyOfRange(payload, counterAt, counterAt + counterLen);
      int expiresAt = counterAt + counterLen;
      long expires = JournalFormat.getLong(payload, expiresAt);
      byte[] state = Arrays.copyOfRange(payload, expiresAt + 8, len);
      // empty: the log left the table; expired: nothing to load (either way an older state is dropped)
      store.restoreLarge(key, counter, state.length == 0 || expires <= now ? null : state, expires);
      return;
    }
    restore(key, payload[0] == PUT ? Arrays.copyOfRange(payload, keyAt + keyLen, len) : null);
  }

  /** Sets a partition's record; one that expired by now is kept aside instead (nothing to load). */
  private void restore(byte[] key, byte[] record) {
    if (record != null && PartitionRecord.expiresAt(record) <= now) {
      expired.put(ByteBuffer.wrap(key), record);
      store.restore(key, null);
      return;
    }
    expired.remove(ByteBuffer.wrap(key));
    store.restore(key, record);
  }

  /** A decision's step: replayed on the record it was made on, skipped if its result is held already. */
  private void replay(JournalDelta.Step step) {
    byte[] base = store.restored(step.partition());
    if (base == null) {
      base = expired.get(ByteBuffer.wrap(step.partition()));
    }
    int held = base == null ? 0 : JournalDelta.crc(base);
    if (base != null && held == step.resultCrc()) {
      return; // a snapshot after this step holds its result
    }
    if (base == null || held != step.baseCrc()) {
      stale++;
      return;
    }
    byte[] next = store.replay(base, step.request(), PartitionRecord.latest(base) + step.sinceLatest());
    if (JournalDelta.crc(next) != step.resultCrc()) {
      differed++;
    }
    restore(step.partition(), next);
  }
}
