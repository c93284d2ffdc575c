package dev.fcap.store.memory;

import dev.fcap.algorithm.LargeLog;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The lock stripes of a {@link MemoryStore}: which {@link Segment} holds a partition (a seeded hash
 * of its key, the segment from its top bits), and the lock-free reads that warm a batch's partitions
 * before they are decided.
 */
final class Segments {
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  final Segment[] all;
  private final int shift;
  private final int seed;

  /** {@code count} segments, rounded up to a power of two. */
  Segments(int count, int seed) {
    int n = count == 1 ? 1 : Integer.highestOneBit(count - 1) << 1;
    this.all = new Segment[n];
    for (int i = 0; i < n; i++) {
      all[i] = new Segment();
    }
    this.shift = 32 - Integer.numberOfTrailingZeros(n);
    this.seed = seed;
  }

  /**
   * The segment of a hash: its top bits, because a segment's table places records by the low bits;
   * taking the segment from the low bits too would leave all but 1/n of each table's home slots unused.
   */
  Segment of(int hash) {
    return all[index(hash)];
  }

  int index(int hash) {
    return (int) ((hash & 0xFFFF_FFFFL) >>> shift);
  }

  /**
   * A seeded hash of the key. A store-private key (an entry, a reset generation) takes its segment
   * bits from its partition's hash, so that one lock covers the partition and what it remembers,
   * and its slot bits from its own.
   */
  int hash(byte[] key) {
    int h = hash(key, 0);
    int from = RememberedDecisions.partitionAt(key);
    if (from == 0 || all.length == 1) {
      return h;
    }
    int segmentBits = -1 << shift;
    h = (hash(key, from) & segmentBits) | (h & ~segmentBits);
    return h == 0 ? 1 : h;
  }

  /** Four bytes per step from {@code from}, then a murmur3 finalizer. */
  private int hash(byte[] key, int from) {
    int h = seed ^ (key.length - from);
    int i = from;
    for (int end = key.length - 3; i < end; i += 4) {
      h = (h ^ (int) INT.get(key, i)) * 0x01000193;
      h = Integer.rotateLeft(h, 13);
    }
    for (; i < key.length; i++) {
      h = (h ^ key[i]) * 0x01000193;
    }
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return h == 0 ? 1 : h; // 0 marks an empty slot in a segment
  }

  /**
   * Reads, for each partition, the lines of its home slot in both tables, then its own slot (found
   * by probing from there, in lines now read) and the first line of its record, without taking the
   * lock: each step for every partition before the next, so that the reads of one partition do not
   * wait for another's. A decision on one of millions of partitions otherwise waits for two cache
   * misses in a row (the slot, then the record it points to), about 250 ns each on the machine of
   * docs/benchmarks.md, which can have 16 such reads in flight at once ("Embedded engine").
   * Reading the home slot's record instead took the replay 1.1x as long: at the tables' load (0.375
   * to 0.75) many partitions sit further on.
   *
   * <p>The reads race with writers on purpose and change nothing: a table replaced by a resize, or a
   * record by a write, is still an array whose own length bounds the read, and whatever is read is
   * thrown away. Nothing is decided from it; the decision that follows reads under the lock.
   */
  void prefetch(byte[][] partitions, int n) {
    Lookahead ahead = LOOKAHEAD.get();
    n = Math.min(n, Lookahead.SIZE);
    for (int k = 0; k < n; k++) {
      ahead.hashes[k] = partitions[k] == null ? 0 : hash(partitions[k]);
    }
    int touched = 0;
    for (int k = 0; k < n; k++) {
      if (partitions[k] != null) {
        touched += of(ahead.hashes[k]).readHome(ahead.hashes[k]);
      }
    }
    for (int k = 0; k < n; k++) {
      if (partitions[k] != null) {
        touched += of(ahead.hashes[k]).readRecord(ahead.hashes[k]);
      }
    }
    ahead.touched = touched; // used, so the reads stay
  }

  /** Per thread: the scratch of {@link #prefetch}. */
  private static final class Lookahead {
    /** The most partitions one call reads; a longer list is cut (a hint may be). */
    static final int SIZE = 64;
    final int[] hashes = new int[SIZE];
    int touched;
  }

  private static final ThreadLocal<Lookahead> LOOKAHEAD = ThreadLocal.withInitial(Lookahead::new);

  /** Drops every partition expired by {@code now} in every segment; returns how many. */
  int sweepAll(long now) {
    int dropped = 0;
    for (Segment s : all) {
      synchronized (s) {
        dropped += s.sweepAll(now);
      }
    }
    return dropped;
  }

  /** Partitions held, expired ones not yet swept included. */
  long size() {
    long n = 0;
    for (Segment s : all) {
      synchronized (s) {
        n += s.size - s.storePrivate;
      }
    }
    return n;
  }

  /**
   * Remembered decisions (message ids, release records) with records of their own beside their
   * partitions (a partition's first few are kept inline: {@link RememberedDecisions}), and reset
   * generations, expired ones not yet swept included.
   */
  long remembered() {
    long n = 0;
    for (Segment s : all) {
      synchronized (s) {
        n += s.storePrivate;
      }
    }
    return n;
  }

  /** Estimated heap bytes held by the tables and records. */
  long bytes() {
    long n = 0;
    for (Segment s : all) {
      synchronized (s) {
        n += s.bytes + s.large.bytes + s.tableBytes();
      }
    }
    return n;
  }

  /** See {@link MemoryStore#restore}. */
  void restore(byte[] partition, byte[] record) {
    int hash = hash(partition);
    Segment segment = of(hash);
    synchronized (segment) {
      if (record != null && RememberedDecisions.partitionAt(partition) != 0) {
        RememberedDecisions.restored(segment, partition, record);
      }
      int slot = segment.find(hash, partition);
      if (record == null) {
        if (slot >= 0) {
          segment.removeAt(slot);
        }
      } else if (slot >= 0) {
        segment.replaceAt(slot, record);
      } else {
        segment.insert(hash, record);
      }
    }
  }

  /** See {@link MemoryStore#restoreLarge}. */
  void restoreLarge(byte[] partition, byte[] counter, byte[] state, long expiresAt) {
    Segment segment = of(hash(partition));
    synchronized (segment) {
      if (state == null) {
        segment.large.remove(partition, counter);
      } else {
        segment.large.put(partition, counter, LargeLog.of(state), expiresAt);
      }
    }
  }
}
