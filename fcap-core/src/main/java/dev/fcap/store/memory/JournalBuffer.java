package dev.fcap.store.memory;

import static dev.fcap.store.memory.JournalFormat.LARGE;
import static dev.fcap.store.memory.JournalFormat.putInt;
import static dev.fcap.store.memory.JournalFormat.putLong;
import static dev.fcap.store.memory.JournalFormat.seal;

import dev.fcap.store.Varint;
import dev.fcap.store.internal.ReusableRequest;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Entries in memory, in the journal's framing: what a segment wrote since the last flush (touched
 * under the segment's lock, or by the flusher once swapped out), or a chunk of a snapshot.
 */
final class JournalBuffer {
  byte[] data;
  int len;
  /** In every-write mode, completed once these entries are on disk; null while nobody waits. */
  CompletableFuture<Void> durable;

  JournalBuffer(int capacity) {
    this.data = new byte[capacity];
  }

  private int reserve(int n) {
    if (len + n > data.length) {
      data = Arrays.copyOf(data, Math.max(data.length * 2, len + n));
    }
    int at = len;
    len += n;
    return at;
  }

  /**
   * Appends an entry of {@code type} for {@code key}, followed by {@code record} if not null;
   * returns where it starts. Its checksum is left to {@link #sealAll} or {@link JournalFormat#seal}.
   */
  int add(byte type, byte[] key, byte[] record) {
    int payload = 1 + Varint.size(key.length) + key.length + (record == null ? 0 : record.length);
    int at = reserve(8 + payload);
    byte[] d = data;
    putInt(d, at, payload);
    int pos = at + 8;
    d[pos++] = type;
    pos = Varint.write(d, pos, key.length);
    System.arraycopy(key, 0, d, pos, key.length);
    if (record != null) {
      System.arraycopy(record, 0, d, pos + key.length, record.length);
    }
    return at;
  }

  /**
   * Appends a {@link JournalFormat#DELTA} entry: {@code request}'s step, {@code sinceLatest} ms after
   * the latest time of the record of checksum {@code baseCrc} it was made on, giving one of checksum
   * {@code resultCrc} ({@link JournalDelta}).
   */
  int addDelta(ReusableRequest request, int baseCrc, int resultCrc, long sinceLatest) {
    int payload = JournalDelta.size(request, sinceLatest);
    int at = reserve(8 + payload);
    putInt(data, at, payload);
    JournalDelta.write(data, at + 8, request, baseCrc, resultCrc, sinceLatest);
    return at;
  }

  /**
   * Appends the current state of each large log in {@code logs} (its removal if it left the table).
   * Called under the segment's lock, so the state is the one the last decision on it left. Sealed
   * at once if {@code seal} (snapshots); the flusher seals journal buffers itself.
   */
  void addLargeLogs(List<LargeLogTable.Held> logs, boolean seal) {
    for (LargeLogTable.Held h : logs) {
      byte[] state = h.gone ? null : h.log.encode();
      if (state == null) {
        state = new byte[0]; // gone, or emptied in place by pruning: nothing to load
      }
      int payload = 1 + Varint.size(h.partition.length) + h.partition.length + Varint.size(h.counter.length)
          + h.counter.length + 8 + state.length;
      int at = reserve(8 + payload);
      byte[] d = data;
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

  /**
   * Appends {@code other}'s entries (the flusher, behind those a failed write left here), and hands
   * this buffer its waiters.
   */
  void append(JournalBuffer other) {
    int at = reserve(other.len); // may replace data: taken before the copy reads it
    System.arraycopy(other.data, 0, data, at, other.len);
    if (durable == null) {
      durable = other.durable;
    } else if (other.durable != null) {
      CompletableFuture<Void> theirs = other.durable;
      durable.whenComplete((v, e) -> {
        if (e == null) {
          theirs.complete(null);
        } else {
          theirs.completeExceptionally(e);
        }
      });
    }
    other.durable = null;
  }

  /** Fills in the checksum of every entry. */
  void sealAll() {
    for (int at = 0; at < len; at += 8 + JournalFormat.getInt(data, at)) {
      seal(data, at);
    }
  }

  /** Empties the buffer once written; a burst grew it past 1 MiB: the memory is given back. */
  void clear() {
    durable = null;
    len = 0;
    if (data.length > (1 << 20)) {
      data = new byte[256];
    }
  }
}
