package dev.fcap.store.memory;

import dev.fcap.algorithm.PartitionStep;
import dev.fcap.store.Clock;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoredCounter;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * The embedded store: every partition's counters packed into one {@code byte[]}, in lock-striped
 * open-addressing tables.
 *
 * <p><b>Design.</b> Memory is the constraint at 10^8 recipients, so there is no object per event,
 * per counter or per map entry: a partition is a single array (see {@link PartitionRecord}) held by
 * one slot of a segment's table, next to its hash in an {@code int[]}. A request hashes its
 * partition to a segment, takes that segment's lock, decodes the counters it needs, runs the pure
 * {@link PartitionStep} and writes one new array back: one atomic step per partition, and segments
 * never block each other. Counters carry their own expiry, so idle partitions are dropped lazily:
 * when touched, by an incremental sweep that visits a slot on every write, and by a full sweep of a
 * segment before it would exceed its share of {@code maxBytes}.
 *
 * <p><b>When full.</b> A segment's share of {@code maxBytes} bounds its records and its tables (a
 * resize the insert would cause included): a new partition is taken only while {@link #bytes()}
 * stays within {@code maxBytes}. Partitions already held may still grow past it, each by at most its
 * counters' own limits (a sliding log by 4 bytes per admission up to its limit): that is the margin,
 * 3 % in {@code FullStoreIT} (limit 3), where the bound without the tables overshot by about 30 %. If a segment
 * is still over its share after dropping everything expired, a request that would add a new
 * partition fails with {@link StoreException.Reason#FULL} (and is counted in {@link #rejected()});
 * partitions already held keep working, and only that request fails. A refusal is as cheap as a
 * decision: the segment sweeps again only once a record can have expired ({@code Segment.nextExpiry}). Evicting live counters instead would
 * silently admit more than the rules allow, which is the one thing fcap must not do; the failure
 * policy of the server decides what a refused request means.
 */
public final class MemoryStore implements Store {
  private static final java.lang.invoke.VarHandle INT =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(int[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
  private final Clock clock;
  private final Segment[] segments;
  private final int segmentShift;
  private final long segmentBudget;
  private final int seed;
  private final LongAdder rejected = new LongAdder();

  private MemoryStore(Builder b) {
    this.clock = b.clock;
    int n = b.segments == 1 ? 1 : Integer.highestOneBit(b.segments - 1) << 1;
    this.segments = new Segment[n];
    for (int i = 0; i < n; i++) {
      segments[i] = new Segment();
    }
    this.segmentShift = 32 - Integer.numberOfTrailingZeros(n);
    this.segmentBudget = Math.max(1, b.maxBytes / n);
    this.seed = b.hashSeed;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public long now() {
    return clock.millis();
  }

  @Override
  public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
    try {
      return CompletableFuture.completedFuture(applyNow(request));
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** {@link #apply} without the future, for callers that stay on one thread (replay, benchmarks). */
  public PartitionResult applyNow(PartitionRequest request) {
    int hash = hash(request.partition());
    Segment segment = segmentOf(hash);
    synchronized (segment) {
      long now = request.time() == PartitionRequest.STORE_TIME ? clock.millis() : request.time();
      int slot = segment.find(hash, request.partition());
      byte[] record = slot < 0 ? null : segment.records[slot];
      List<CounterRequest> counters = request.counters();
      byte[][] states = new byte[counters.size()][];
      if (record != null) {
        PartitionRecord.readStates(record, counters, now, states);
      }
      PartitionResult result = PartitionStep.apply(request, now, states);
      // A dry run or a refused decision changes no state: leave the record as it is (expired
      // counters in it are dropped by the next write or the sweep).
      if (request.operation() == Operation.RELEASE || (request.operation() == Operation.DECIDE && result.allowed())) {
        byte[] next = PartitionRecord.write(record, request.partition(), counters, states, now);
        store(segment, hash, slot, request.partition(), next, now);
      }
      segment.sweepStep(now);
      return result;
    }
  }

  private void store(Segment segment, int hash, int slot, byte[] partition, byte[] next, long now) {
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
    if (segment.bytesAfterInsert(next) > segmentBudget) {
      // sweep only if something can have expired since the last sweep: a refusal costs O(1)
      if (now >= segment.nextExpiry) {
        segment.sweepAll(now);
      }
      if (segment.bytesAfterInsert(next) > segmentBudget) {
        rejected.increment();
        throw new StoreException(StoreException.Reason.FULL, "memory store is full (maxBytes reached); "
            + "new recipients are refused until counters expire");
      }
    }
    segment.insert(hash, next);
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    int hash = hash(partition);
    Segment segment = segmentOf(hash);
    synchronized (segment) {
      long now = clock.millis();
      int slot = segment.find(hash, partition);
      List<StoredCounter> counters = slot < 0 ? List.of() : PartitionRecord.live(segment.records[slot], now);
      return CompletableFuture.completedFuture(new PartitionSnapshot(now, counters));
    }
  }

  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    int hash = hash(partition);
    Segment segment = segmentOf(hash);
    synchronized (segment) {
      int slot = segment.find(hash, partition);
      if (slot >= 0) {
        segment.removeAt(slot);
        segment.shrinkIfSparse();
      }
      return CompletableFuture.completedFuture(slot >= 0);
    }
  }

  /** Drops every expired partition now (also done lazily); returns how many were dropped. */
  public int evictExpired() {
    int dropped = 0;
    long now = clock.millis();
    for (Segment s : segments) {
      synchronized (s) {
        dropped += s.sweepAll(now);
      }
    }
    return dropped;
  }

  /** Partitions held, expired ones not yet swept included. */
  public long size() {
    long n = 0;
    for (Segment s : segments) {
      synchronized (s) {
        n += s.size;
      }
    }
    return n;
  }

  /** Estimated heap bytes held by the tables and records. */
  public long bytes() {
    long n = 0;
    for (Segment s : segments) {
      synchronized (s) {
        n += s.bytes + s.tableBytes();
      }
    }
    return n;
  }

  /** Requests refused because the store was full. */
  public long rejected() {
    return rejected.sum();
  }

  /**
   * The segment of a hash: its top bits, because a segment's table places records by the low bits;
   * taking the segment from the low bits too would leave all but 1/n of each table's home slots unused.
   */
  private Segment segmentOf(int hash) {
    return segments[(int) ((hash & 0xFFFF_FFFFL) >>> segmentShift)];
  }

  /** A seeded hash of the key: four bytes per step, then a murmur3 finalizer. */
  private int hash(byte[] key) {
    int h = seed ^ key.length;
    int i = 0;
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

  /** Immutable settings of a {@link MemoryStore}. */
  public static final class Builder {
    private Clock clock = Clock.system();
    private long maxBytes = Runtime.getRuntime().maxMemory() / 4;
    private int segments = Math.max(16, Runtime.getRuntime().availableProcessors() * 16);
    private int hashSeed = new java.util.SplittableRandom().nextInt();

    private Builder() {}

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The most heap the store may hold; default a quarter of the maximum heap. */
    public Builder maxBytes(long maxBytes) {
      if (maxBytes < 1) {
        throw new IllegalArgumentException("maxBytes must be positive");
      }
      this.maxBytes = maxBytes;
      return this;
    }

    /** Lock stripes; rounded up to a power of two. */
    public Builder segments(int segments) {
      if (segments < 1) {
        throw new IllegalArgumentException("segments must be positive");
      }
      this.segments = segments;
      return this;
    }

    public MemoryStore build() {
      return new MemoryStore(this);
    }
  }
}
