package dev.fcap.store.memory;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToIntFunction;

/**
 * Where the {@link MemoryStore} keeps remembered decisions (a message id's first admitted decision,
 * a release record: {@link dev.fcap.store.Idempotency}): a partition's first {@link #INLINE_MAX}
 * inline, in its own record, and the rest each in a record of its own, beside it.
 *
 * <p><b>Why beside.</b> Inside the partition's record, among its counters, every step copied them
 * all: a partition shared by many recipients (a channel-wide rule) holds one release record per
 * admitted decision of the release horizon, so a decision there cost O(decisions in the horizon),
 * 1.5 ms after 40,000 of them ({@code SharedPartitionCost}). Beside it, a step reads or writes only
 * the entry it needs ({@code RememberedDecisionsTest} checks that the partition's record keeps its
 * size). <b>Why the first few inline:</b> a recipient's partition remembers a few decisions per
 * horizon, and inline each costs 72 bytes where a record of its own costs 138 (its key repeats the
 * partition's, plus a table slot); a lookup tries the record first, then the entry beside it.
 *
 * <p><b>Keys and lock.</b> An entry is the record {@code ENTRY key(16) partition}
 * ({@link PartitionRecord#entry}), whose hash takes its segment bits from the partition's
 * ({@code MemoryStore.hash}): same segment, same lock, so a decision's counts and its entry change
 * in one step. The journal, the sweep, snapshots and recovery treat it as any record; it is written
 * after the counts, so a journal cut between the two loses the entry (its release then answers
 * {@code unknown}: an under-release), never keeps an entry whose counts are gone. Callers' partition
 * keys never start with the store-private bytes 0xFE and 0xFF ({@link #checkPartition}).
 *
 * <p><b>Resets.</b> A reset cannot find a partition's entries (they are keyed by their own ids), so
 * it moves the partition to a new generation instead: a record {@code RESET partition} holding a
 * counter, kept as long as any entry of the segment may live, and extended by each entry written in
 * that generation. An entry carries the generation it was written in as its id; one of another
 * generation reads as absent. So a release of a decision made before the reset gives nothing back
 * (it must not take units counted after it), and a message id sent again is decided afresh. A
 * segment where no generation record lives pays one comparison per decision for this.
 */
final class RememberedDecisions {
  /** First byte of an entry's key. */
  static final byte ENTRY = (byte) 0xFF;
  /** First byte of a reset generation's key. */
  static final byte RESET = (byte) 0xFE;
  /** Remembered decisions a partition keeps inline, in its own record, before they get records of their own. */
  static final int INLINE_MAX = 4;
  /** The generation of a partition never reset while entries of it may live: an empty entry id. */
  private static final byte[] FIRST_GENERATION = new byte[0];

  /** One remembered decision's place: its key, the key's hash, the partition's generation. */
  record Entry(byte[] key, int hash, byte[] generation) {}

  private final ToIntFunction<byte[]> hash;
  /** Null: memory only. */
  private final Journal journal;

  RememberedDecisions(ToIntFunction<byte[]> hash, Journal journal) {
    this.hash = hash;
    this.journal = journal;
  }

  /** Where a store-private key's partition starts (0: the key is a partition's own). */
  static int partitionAt(byte[] key) {
    return key.length == 0 ? 0 : key[0] == ENTRY ? 17 : key[0] == RESET ? 1 : 0;
  }

  /** Callers' partition keys never start with a store-private byte (the engine's start with a letter or 0). */
  static void checkPartition(byte[] partition) {
    if (partitionAt(partition) != 0) {
      throw new IllegalArgumentException("partition keys starting with 0xFE or 0xFF are reserved by the store");
    }
  }

  /** The entry of id {@code id} (16 bytes) of {@code partition} at {@code now}. Segment lock held. */
  Entry entry(Segment segment, byte[] partition, byte[] id, long now) {
    byte[] key = entryKey(partition, id);
    return new Entry(key, hash.applyAsInt(key), generation(segment, partition, now));
  }

  /** The remembered decision of {@code e}, if live and of the partition's current generation. */
  static byte[] find(Segment segment, Entry e, long now) {
    int slot = segment.find(e.hash, e.key);
    return slot < 0 ? null : RecordMessages.readMessage(segment.records[slot], e.generation, now);
  }

  /** The record that remembers {@code remembered} ({@code PartitionStep.remember} bytes) as {@code e}. */
  static byte[] record(Entry e, byte[] remembered, long expiresAt) {
    return RecordMessages.entry(e.key, e.generation, remembered, expiresAt);
  }

  /**
   * After the partition's counts: writes {@code record} as {@code e}, or, for a release (null), drops
   * the entry it released. Returns the journal's future covering the writes (else {@code written}).
   */
  CompletableFuture<Void> write(int index, Segment segment, Entry e, byte[] record, CompletableFuture<Void> written) {
    int slot = segment.find(e.hash, e.key);
    if (record == null) {
      if (slot < 0) {
        return written;
      }
      segment.removeAt(slot);
      return journal == null ? written : journal.append(index, e.key, null);
    }
    put(segment, e.hash, slot, record);
    long expiresAt = PartitionRecord.expiresAt(record);
    segment.entriesUntil = Math.max(segment.entriesUntil, expiresAt);
    if (journal != null) {
      written = journal.append(index, e.key, record);
    }
    if (e.generation.length > 0) {
      // the generation must outlive its entries, or they would read as another generation's
      byte[] reset = resetKey(Arrays.copyOfRange(e.key, 17, e.key.length));
      int resetHash = hash.applyAsInt(reset);
      int at = segment.find(resetHash, reset);
      if (at >= 0 && PartitionRecord.expiresAt(segment.records[at]) < expiresAt) {
        written = putGeneration(index, segment, resetHash, at, reset, e.generation, expiresAt);
      }
    }
    return written;
  }

  /**
   * A reset of {@code partition} (whose record the caller deletes): moves it to a new generation if
   * entries of the segment may still live. Returns the journal's future, or null.
   */
  CompletableFuture<Void> reset(int index, Segment segment, byte[] partition, long now) {
    if (now >= segment.entriesUntil) {
      return null;
    }
    byte[] current = generation(segment, partition, now);
    long next = current.length == 0 ? 1 : java.nio.ByteBuffer.wrap(current).getLong() + 1;
    byte[] key = resetKey(partition);
    int resetHash = hash.applyAsInt(key);
    return putGeneration(index, segment, resetHash, segment.find(resetHash, key), key,
        java.nio.ByteBuffer.allocate(8).putLong(next).array(), segment.entriesUntil);
  }

  /** Recovery put {@code record} under the store-private {@code key}: keeps the segment's bounds. */
  static void restored(Segment segment, byte[] key, byte[] record) {
    long until = PartitionRecord.expiresAt(record);
    if (key[0] == ENTRY) {
      segment.entriesUntil = Math.max(segment.entriesUntil, until);
    } else {
      segment.resetsUntil = Math.max(segment.resetsUntil, until);
    }
  }

  private static byte[] entryKey(byte[] partition, byte[] id) {
    byte[] key = new byte[1 + id.length + partition.length];
    key[0] = ENTRY;
    System.arraycopy(id, 0, key, 1, id.length);
    System.arraycopy(partition, 0, key, 1 + id.length, partition.length);
    return key;
  }

  private static byte[] resetKey(byte[] partition) {
    byte[] out = new byte[1 + partition.length];
    out[0] = RESET;
    System.arraycopy(partition, 0, out, 1, partition.length);
    return out;
  }

  /**
   * The partition's reset generation at {@code now}, as the id its entries carry: empty while no
   * generation record lives in the segment (the usual case costs one comparison).
   */
  private byte[] generation(Segment segment, byte[] partition, long now) {
    if (now >= segment.resetsUntil) {
      return FIRST_GENERATION;
    }
    byte[] key = resetKey(partition);
    int slot = segment.find(hash.applyAsInt(key), key);
    byte[] g = slot < 0 ? null : RecordMessages.readMessage(segment.records[slot], FIRST_GENERATION, now);
    return g == null ? FIRST_GENERATION : g;
  }

  private CompletableFuture<Void> putGeneration(int index, Segment segment, int hash, int slot, byte[] key,
      byte[] generation, long until) {
    byte[] record = RecordMessages.entry(key, FIRST_GENERATION, generation, until);
    put(segment, hash, slot, record);
    segment.resetsUntil = Math.max(segment.resetsUntil, PartitionRecord.expiresAt(record));
    return journal == null ? null : journal.append(index, key, record);
  }

  private static void put(Segment segment, int hash, int slot, byte[] record) {
    if (slot >= 0) {
      segment.replaceAt(slot, record);
    } else {
      segment.insert(hash, record);
    }
  }
}
