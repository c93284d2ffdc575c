package dev.fcap.store.memory;

import dev.fcap.store.StoreException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * A segment's share of the store's {@code maxBytes}, and what a write does at its edge.
 *
 * <p>The share bounds the segment's records and its tables (a resize the insert would cause
 * included): a new partition is taken only while {@link MemoryStore#bytes()} stays within
 * {@code maxBytes}. Partitions already held may still grow past it, each by at most its counters'
 * own limits (a sliding log by 4 bytes per admission up to its limit): that is the margin, 3 % in
 * {@code FullStoreIT} (limit 3). If a segment is still over its share after dropping everything
 * expired, a request that would add a new partition fails with {@link StoreException.Reason#FULL}
 * (counted in {@link MemoryStore#rejected()}); partitions already held keep working, and only that
 * request fails. The refusal says when room can first free ({@link StoreException.Full#retryAfterMs}):
 * the segment's next expiry, by the sweep's time. A refusal is as cheap as a decision: the segment sweeps again only once a record
 * can have expired ({@code Segment.nextExpiry}). Evicting live counters instead would silently admit
 * more than the rules allow, which is the one thing fcap must not do; the failure policy of the
 * server decides what a refused request means.
 */
final class SegmentBudget {
  private final long perSegment;
  private final LongSupplier sweepTime;
  private final LongAdder rejected = new LongAdder();

  SegmentBudget(long perSegment, LongSupplier sweepTime) {
    this.perSegment = perSegment;
    this.sweepTime = sweepTime;
  }

  /** Requests refused because their segment was full. */
  long rejected() {
    return rejected.sum();
  }

  /**
   * Stores {@code next} at {@code slot} (-1: a new partition, held to the segment's budget).
   * {@code growsLargeLog}: the write also records into a large log, which the budget counts, so even
   * a new partition whose record holds nothing else is refused when full.
   */
  void store(Segment segment, int hash, int slot, byte[] next, boolean growsLargeLog) {
    if (next == null) {
      if (slot >= 0) {
        segment.removeAt(slot);
        segment.shrinkIfSparse();
      }
      return;
    }
    if (slot >= 0) {
      segment.replaceAt(slot, next);
      return;
    }
    if (segment.bytesAfterInsert(next) > perSegment) {
      if (PartitionRecord.isEmpty(next) && !growsLargeLog) {
        return; // only a time, of a partition that holds nothing: not worth refusing a release for
      }
      makeRoom(segment, next, 0);
    }
    segment.insert(hash, next);
  }

  /**
   * Room in the segment for {@code record} and {@code extra} more bytes, after one sweep if something
   * can have expired since the last (so a refusal costs O(1)); else FULL, nothing written. Returns
   * whether it swept (slots moved).
   */
  boolean makeRoom(Segment segment, byte[] record, long extra) {
    if (segment.bytesAfterInsert(record) + extra <= perSegment) {
      return false;
    }
    long horizon = sweepTime.getAsLong();
    boolean swept = horizon >= segment.nextExpiry;
    if (swept) {
      segment.sweepAll(horizon);
    }
    if (segment.bytesAfterInsert(record) + extra > perSegment) {
      rejected.increment();
      // nothing in this segment expires before nextExpiry, and the sweep goes by its own time
      long retryAfterMs = segment.nextExpiry == Long.MAX_VALUE ? -1 : Math.max(1, segment.nextExpiry - horizon);
      throw new StoreException.Full("memory store is full (maxBytes reached); new recipients are refused until "
          + "counters expire", retryAfterMs);
    }
    return swept;
  }
}
