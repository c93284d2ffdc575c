package dev.fcap.engine;

import dev.fcap.store.PartitionRequest;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Remembers what admitted decisions recorded, so that {@code release} can undo them by decision id.
 *
 * <p><b>Design.</b> A ring of the most recent {@code capacity} admitted decisions: a decision id is
 * the ring sequence number plus random bits, so a lookup is one array read and a stale or forged id
 * simply does not match. Old decisions are overwritten, never leaked; their release answers false.
 * Releasing is idempotent: the first call flips the entry's flag and undoes the counts, later calls
 * find it released and change nothing.
 */
final class ReleaseLedger {
  /**
   * What an admitted decision recorded: its tenant, the partitions and the time each recorded at.
   * The requests carry the specs of the policy in force then; a release counts with the tenant's
   * current ones (see {@code Engine.release}).
   */
  static final class Entry {
    final String decisionId;
    final String tenant;
    final List<PartitionRequest> recorded;
    final long[] times;
    final AtomicBoolean released = new AtomicBoolean();

    Entry(String decisionId, String tenant, List<PartitionRequest> recorded, long[] times) {
      this.decisionId = decisionId;
      this.tenant = tenant;
      this.recorded = recorded;
      this.times = times;
    }
  }

  private final AtomicReferenceArray<Entry> ring;
  private final int mask;
  private final AtomicLong sequence = new AtomicLong();

  ReleaseLedger(int capacity) {
    int size = capacity <= 0 ? 0 : Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
    this.ring = new AtomicReferenceArray<>(size);
    this.mask = size - 1;
  }

  /** A fresh decision id; {@link #remember} files an entry under it. */
  String newId() {
    long seq = sequence.getAndIncrement();
    long random = ThreadLocalRandom.current().nextLong() & 0xFFFF_FFFF_FFFFL;
    byte[] id = new byte[24];
    hex(seq, id, 0);
    hex(random, id, 12);
    return new String(id, java.nio.charset.StandardCharsets.ISO_8859_1);
  }

  private static final byte[] DIGITS = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);

  /** Twelve lower-case hex digits of the low 48 bits of {@code v}, written at {@code at}. */
  private static void hex(long v, byte[] out, int at) {
    for (int i = at + 11; i >= at; i--) {
      out[i] = DIGITS[(int) (v & 0xf)];
      v >>>= 4;
    }
  }

  void remember(Entry entry) {
    if (ring.length() == 0) {
      return;
    }
    ring.set((int) (sequenceOf(entry.decisionId) & mask), entry);
  }

  /** The entry of a decision id, if it is still held. */
  Entry find(String decisionId) {
    if (ring.length() == 0 || decisionId == null || decisionId.length() != 24) {
      return null;
    }
    long seq = sequenceOf(decisionId);
    if (seq < 0) {
      return null;
    }
    Entry e = ring.get((int) (seq & mask));
    return e != null && e.decisionId.equals(decisionId) ? e : null;
  }

  /**
   * Marks released every held decision that recorded in {@code partition} (a reset forgot it): its
   * counts there are gone, and a release must not take units from what was counted after the reset.
   * O(capacity); resets are rare.
   */
  void forgetPartition(byte[] partition) {
    for (int i = 0; i < ring.length(); i++) {
      Entry e = ring.get(i);
      if (e != null && !e.released.get()) {
        for (PartitionRequest r : e.recorded) {
          if (java.util.Arrays.equals(r.partition(), partition)) {
            e.released.set(true);
            break;
          }
        }
      }
    }
  }

  private static long sequenceOf(String id) {
    try {
      return Long.parseLong(id, 0, 12, 16);
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
