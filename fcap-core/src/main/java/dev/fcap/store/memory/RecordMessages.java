package dev.fcap.store.memory;

import static dev.fcap.store.memory.PartitionRecord.HEAD;
import static dev.fcap.store.memory.PartitionRecord.MESSAGE;
import static dev.fcap.store.memory.PartitionRecord.expiresMs;
import static dev.fcap.store.memory.PartitionRecord.idEquals;
import static dev.fcap.store.memory.PartitionRecord.nextCounter;
import static dev.fcap.store.memory.PartitionRecord.putInt;
import static dev.fcap.store.memory.PartitionRecord.skipKey;
import static dev.fcap.store.memory.PartitionRecord.toSeconds;
import static dev.fcap.store.memory.PartitionRecord.writeCounter;

import dev.fcap.store.Varint;
import java.util.Arrays;

/**
 * The remembered decisions a partition's record holds inline (entries of kind
 * {@link PartitionRecord#MESSAGE}, at most {@link RememberedDecisions#INLINE_MAX}), and the record of
 * its own that holds one beside the partition: read, counted, dropped and written in the record's
 * layout ({@link PartitionRecord}).
 */
final class RecordMessages {
  private RecordMessages() {}

  /** The remembered decision of message id {@code key}, if the record holds a live one; else null. */
  static byte[] readMessage(byte[] record, byte[] key, long now) {
    for (int at = skipKey(record); at < record.length; ) {
      int idLen = Varint.read(record, at);
      int id = at + Varint.size(idLen);
      int alg = id + idLen;
      int stateLen = Varint.read(record, alg + 5);
      int state = alg + 5 + Varint.size(stateLen);
      if (record[alg] == MESSAGE && expiresMs(record, alg + 1) > now && idEquals(record, id, idLen, key)) {
        return Arrays.copyOfRange(record, state, state + stateLen);
      }
      at = state + stateLen;
    }
    return null;
  }

  /**
   * A record of its own for one remembered decision (see {@link MemoryStore}, "Remembered
   * decisions"): under the store-private {@code key}, one entry of kind {@link PartitionRecord#MESSAGE} whose id is
   * {@code id} (the partition's reset generation) and whose state is {@code remembered}, until
   * {@code expiresAt} (epoch ms). Its time is never read: it is no partition of counters.
   */
  static byte[] entry(byte[] key, byte[] id, byte[] remembered, long expiresAt) {
    int expires = toSeconds(expiresAt);
    byte[] out = new byte[HEAD + Varint.size(key.length) + key.length + 1 + Varint.size(id.length) + id.length + 5
        + Varint.size(remembered.length) + remembered.length];
    putInt(out, 0, expires);
    int pos = Varint.write(out, HEAD, key.length);
    System.arraycopy(key, 0, out, pos, key.length);
    pos = Varint.write(out, pos + key.length, 0);
    writeCounter(out, pos, id, MESSAGE, expires, remembered);
    return out;
  }

  /** How many live remembered decisions the record holds inline. */
  static int messages(byte[] record, long now) {
    int n = 0;
    for (int at = skipKey(record); at < record.length; at = nextCounter(record, at)) {
      int idLen = Varint.read(record, at);
      int alg = at + Varint.size(idLen) + idLen;
      if (record[alg] == MESSAGE && expiresMs(record, alg + 1) > now) {
        n++;
      }
    }
    return n;
  }

  /** {@code record} without the remembered decision of {@code key} (the key and the time stay). */
  static byte[] withoutMessage(byte[] record, byte[] key) {
    for (int at = skipKey(record); at < record.length; ) {
      int next = nextCounter(record, at);
      int idLen = Varint.read(record, at);
      int id = at + Varint.size(idLen);
      if (record[id + idLen] == MESSAGE && idEquals(record, id, idLen, key)) {
        byte[] out = new byte[record.length - (next - at)];
        System.arraycopy(record, 0, out, 0, at);
        System.arraycopy(record, next, out, at, record.length - next);
        return out; // the header's expiry may now be later than needed: kept a little longer, never shorter
      }
      at = next;
    }
    return record;
  }
}
