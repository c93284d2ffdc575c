package dev.fcap.store.memory;

/**
 * One lock stripe of the {@link MemoryStore}: an open-addressing table (linear probing, deletion by
 * backward shift) of packed partition records with their hashes beside them (hash 0 = empty slot).
 * Not thread-safe: the store holds the segment's monitor around every call.
 */
final class Segment {
  private static final int ARRAY_HEADER = 16;

  int[] hashes = new int[8];
  byte[][] records = new byte[8][];
  int size;
  /** Of {@link #size}, the store's own records (remembered decisions, reset generations). */
  int storePrivate;
  /** Heap held by the records themselves (headers included, padded to 8). */
  long bytes;
  /** The segment's large sliding logs, kept beside the records (see {@link LargeLogTable}). */
  final LargeLogTable large = new LargeLogTable();
  /**
   * No record expires before this (a lower bound, kept on every write and recomputed by
   * {@link #sweepAll}): until then a full sweep cannot free anything, so a full segment refuses in
   * O(1) instead of sweeping again.
   */
  long nextExpiry = Long.MAX_VALUE;
  /** No remembered decision (an entry) of this segment lives past this; bounds a reset generation's life. */
  long entriesUntil = Long.MIN_VALUE;
  /** No reset generation of this segment lives past this: until then, entries are read by generation. */
  long resetsUntil = Long.MIN_VALUE;
  /** A request's counter states while it is applied: reused under the segment's lock, so a request allocates no array for them. */
  private final dev.fcap.algorithm.CounterStates states = new dev.fcap.algorithm.CounterStates(4);
  /** The answer of a request applied through {@link dev.fcap.store.Store#apply}, copied out before the lock is let go. */
  final dev.fcap.store.internal.ReusableResult result = new dev.fcap.store.internal.ReusableResult();
  /** What the step under this segment's lock leaves to write (overwritten by each step). */
  final dev.fcap.algorithm.StepWrites writes = new dev.fcap.algorithm.StepWrites();
  private int sweepCursor;
  private int sweepTicks;
  static final int SWEEP_EVERY = 8;

  /** Scratch for the states of {@code n} counters, all empty (see {@link #states}). */
  dev.fcap.algorithm.CounterStates states(int n) {
    return states.reset(n);
  }

  static long cost(byte[] record) {
    return ARRAY_HEADER + ((record.length + 7) & ~7);
  }

  /** The two tables: a reference (counted as 8 bytes) and a hash (4) per slot. */
  long tableBytes() {
    return tableBytes(records.length);
  }

  private static long tableBytes(int capacity) {
    return 2L * ARRAY_HEADER + capacity * 12L;
  }

  /** Heap this segment holds after inserting {@code record}: records, tables, a resize included. */
  long bytesAfterInsert(byte[] record) {
    int capacity = (size + 1) * 4L > records.length * 3L ? records.length * 2 : records.length;
    return bytes + large.bytes + cost(record) + tableBytes(capacity);
  }

  /**
   * The slot holding {@code key}, or -1. Probes on {@link #hashes} alone (a hash is never 0, and an
   * empty slot's is), so a lookup reads the reference array and a record only on a hash match.
   */
  int find(int hash, byte[] key) {
    int mask = hashes.length - 1;
    for (int i = hash & mask, h; (h = hashes[i]) != 0; i = (i + 1) & mask) {
      if (h == hash && PartitionRecord.keyEquals(records[i], key)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Reads the lines of {@code hash}'s home slot in both tables, without the lock (a hint:
   * {@link MemoryStore#prefetch}). A resize may replace either table meanwhile: each bounds its own
   * read. What it returns means nothing; it only keeps the reads.
   */
  int readHome(int hash) {
    int[] h = hashes;
    byte[][] r = records;
    return h[hash & (h.length - 1)] + (r[hash & (r.length - 1)] == null ? 0 : 1);
  }

  /**
   * Reads the first line of the record whose slot holds {@code hash}, probing from its home slot as
   * {@link #find} does (at most 8 slots, hashes only), without the lock, as {@link #readHome}.
   */
  int readRecord(int hash) {
    int[] h = hashes;
    byte[][] r = records;
    int mask = Math.min(h.length, r.length) - 1;
    int slot = hash & mask;
    for (int probes = 0; probes < 8 && h[slot] != 0 && h[slot] != hash; probes++) {
      slot = (slot + 1) & mask;
    }
    byte[] record = r[slot];
    return record == null ? 0 : record[0];
  }

  void insert(int hash, byte[] record) {
    if ((size + 1) * 4L > records.length * 3L) {
      resize(records.length * 2);
    }
    int mask = records.length - 1;
    int i = hash & mask;
    while (records[i] != null) {
      i = (i + 1) & mask;
    }
    hashes[i] = hash;
    records[i] = record;
    size++;
    if (PartitionRecord.isStorePrivate(record)) {
      storePrivate++;
    }
    bytes += cost(record);
    nextExpiry = Math.min(nextExpiry, PartitionRecord.expiresAt(record));
  }

  void replaceAt(int slot, byte[] record) {
    bytes += cost(record) - cost(records[slot]);
    records[slot] = record;
    nextExpiry = Math.min(nextExpiry, PartitionRecord.expiresAt(record));
  }

  void removeAt(int slot) {
    bytes -= cost(records[slot]);
    size--;
    if (PartitionRecord.isStorePrivate(records[slot])) {
      storePrivate--;
    }
    int mask = records.length - 1;
    int gap = slot;
    records[gap] = null;
    hashes[gap] = 0;
    // Backward shift: move later entries of the probe run into the gap when their home allows it.
    for (int i = (gap + 1) & mask; records[i] != null; i = (i + 1) & mask) {
      int home = hashes[i] & mask;
      boolean movable = gap <= i ? (home <= gap || home > i) : (home <= gap && home > i);
      if (movable) {
        records[gap] = records[i];
        hashes[gap] = hashes[i];
        records[i] = null;
        hashes[i] = 0;
        gap = i;
      }
    }
  }

  /** Gives memory back after many removals; never called while iterating. */
  void shrinkIfSparse() {
    int capacity = records.length;
    while (capacity > 8 && size * 8L < capacity) {
      capacity /= 2;
    }
    if (capacity != records.length) {
      resize(capacity);
    }
  }

  /**
   * Whether this call should visit one slot (one call in {@link #SWEEP_EVERY}): spreads the cost of
   * expiry over requests. Every visit reads a record that is rarely in cache, so visiting on every
   * request cost about a tenth of a decision; the full sweep before a segment would exceed its budget
   * keeps the bound either way.
   */
  boolean sweepDue() {
    return (++sweepTicks & (SWEEP_EVERY - 1)) == 0;
  }

  /**
   * Visits the next slot and drops its record if it expired by {@code horizon}. The horizon is the
   * store's sweep time, never a request's own time: another partition may still be needed by a
   * request at an earlier time (see {@link MemoryStore}).
   */
  void sweepNext(long horizon) {
    if ((sweepCursor & 255) == 0 && !large.isEmpty()) {
      large.sweep(horizon); // few: channel-, sender- or tenant-wide counters with large limits
    }
    int slot = sweepCursor++ & (records.length - 1);
    if (records[slot] != null && PartitionRecord.expiresAt(records[slot]) <= horizon) {
      removeAt(slot);
    }
  }

  /** Drops every record that expired by {@code horizon} (the store's sweep time, as in {@link #sweepNext}). */
  int sweepAll(long horizon) {
    int dropped = 0;
    long next = Long.MAX_VALUE;
    for (int i = 0; i < records.length; i++) {
      while (records[i] != null && PartitionRecord.expiresAt(records[i]) <= horizon) {
        removeAt(i); // the backward shift may move another record into slot i
        dropped++;
      }
      if (records[i] != null) {
        next = Math.min(next, PartitionRecord.expiresAt(records[i]));
      }
    }
    nextExpiry = next;
    shrinkIfSparse();
    return dropped + large.sweep(horizon);
  }

  private void resize(int capacity) {
    int[] oldHashes = hashes;
    byte[][] oldRecords = records;
    hashes = new int[capacity];
    records = new byte[capacity][];
    int mask = capacity - 1;
    for (int j = 0; j < oldRecords.length; j++) {
      if (oldRecords[j] != null) {
        int i = oldHashes[j] & mask;
        while (records[i] != null) {
          i = (i + 1) & mask;
        }
        records[i] = oldRecords[j];
        hashes[i] = oldHashes[j];
      }
    }
  }
}
