package dev.fcap.store.memory;

import dev.fcap.algorithm.CounterStates;
import dev.fcap.algorithm.LargeLog;
import dev.fcap.algorithm.PartitionStep;
import dev.fcap.algorithm.StepWrites;
import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoredCounter;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.internal.CallingThreadStore;
import dev.fcap.store.internal.ReusableRequest;
import dev.fcap.store.internal.ReusableResult;
import dev.fcap.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The embedded store: every partition's counters packed into one {@code byte[]}, in lock-striped
 * open-addressing tables.
 *
 * <p><b>Design.</b> Memory is the constraint at 10^8 recipients, so there is no object per event,
 * per counter or per map entry: a partition is a single array (see {@link PartitionRecord}) held by
 * one slot of a segment's table, next to its hash in an {@code int[]}. A request hashes its
 * partition to a segment, takes that segment's lock, finds the states of the counters it needs in
 * the record (read in place, not copied: {@link dev.fcap.algorithm.CounterStates}), runs the pure
 * {@link PartitionStep} and, if it changed anything, writes one new array back (a record is never
 * changed in place, so a state read from it stays valid): one atomic step per partition, and segments
 * never block each other. Counters carry their own expiry, so idle partitions are dropped lazily:
 * when touched, by an incremental sweep that visits a slot on every write, and by a full sweep of a
 * segment before it would exceed its share of {@code maxBytes}.
 *
 * <p><b>When full.</b> See {@link SegmentBudget}: a new partition is refused ({@link #rejected()})
 * rather than a live counter evicted.
 *
 * <p><b>Durable or not.</b> Built with {@link Builder#durable}, every write is also appended to a
 * journal on disk (see {@link Journal}: recovery at build, a forced journal every
 * {@link Durability#syncEvery()}, snapshots); without it the store lives in memory only (replays,
 * benchmarks, the failure policy's local store). Large sliding logs (above
 * {@code LargeLog.LARGE_FROM} entries, held in the segment's {@code LargeLogTable} beside the
 * records, changed in place) are as durable as records, but written differently: a decision only
 * marks its log changed, and the journal's flusher writes each changed log whole once per flush
 * (every {@link Journal#WRITE_EVERY_MS} ms; in every-write mode before the caller's future
 * completes), so a channel-wide log of a million entries costs one write per flush, not one per
 * decision; snapshots carry every live log, and a graceful close writes the last changes
 * ({@code JournalTest}, docs/server.md "What survives what").
 *
 * <p><b>Remembered decisions.</b> A message id or a release record ({@link Idempotency}) is kept in
 * its partition's record while it holds fewer than four, else in a record of its own beside it, in
 * the same segment and step ({@link RememberedDecisions}: why, and how a reset forgets them).
 *
 * <p><b>Whose clock expires what.</b> A request decides at its own time (the store's clock, or a
 * caller-supplied time for replays and tests), but never before its partition's latest written time
 * ({@code PartitionRecord.latest}: a step back of the clock is decided at that time, since what a
 * write pruned or dropped by its time is gone). Dropping <i>other</i> partitions goes by the
 * {@link SweepClock}'s time instead, which no request can go below.
 */
public final class MemoryStore implements CallingThreadStore {
  /** See {@link Builder#clockStepGrace}. */
  static final long DEFAULT_CLOCK_STEP_GRACE_MS = 10_000;
  /** Per thread: {@link #applyNow(PartitionRequest, CompletableFuture[])} calls nothing that could apply again. */
  private static final ThreadLocal<ReusableRequest> READABLE = ThreadLocal.withInitial(ReusableRequest::new);
  /**
   * Requests whose partitions {@link #applyAll} reads together before applying them: enough for their
   * reads to overlap (the machine of docs/benchmarks.md keeps 16 in flight), few enough to stay in
   * the caches until applied. The replay hands the store as many rows at a time.
   */
  public static final int AHEAD = 16;
  private final Clock clock;
  private final Segments segments;
  private final SegmentBudget budget;
  private final SweepClock sweepClock;
  /** Null: memory only. */
  private final Journal journal;
  private final RememberedDecisions rememberedDecisions;
  private final long maxBytes;
  /** The tenants' suppression lists, beside the journal for a durable store. */
  private final LocalSuppressions suppressions;

  private MemoryStore(Builder b) {
    this.clock = b.clock;
    this.maxBytes = b.maxBytes;
    this.segments = new Segments(b.segments, b.hashSeed);
    this.sweepClock = new SweepClock(clock, b.clockStepGraceMs);
    this.budget = new SegmentBudget(Math.max(1, b.maxBytes / segments.all.length), sweepClock::time);
    this.journal = b.durability == null ? null : Journal.open(b.durability, segments.all, clock, this, b.journalThreads);
    this.rememberedDecisions = new RememberedDecisions(segments::hash, journal);
    this.suppressions = b.durability == null ? LocalSuppressions.inMemory(clock)
        : LocalSuppressions.open(b.durability.dir(), clock);
    if (journal != null) {
      for (Segment s : segments.all) {
        synchronized (s) {
          s.large.track(); // after recovery: from now on a changed large log is listed for the journal
        }
      }
    }
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
      if (journal == null || !journal.syncsEveryWrite()) {
        return CompletableFuture.completedFuture(applyNow(request, null));
      }
      @SuppressWarnings("unchecked")
      CompletableFuture<Void>[] durable = new CompletableFuture[1];
      PartitionResult result = applyNow(request, durable);
      return durable[0] == null ? CompletableFuture.completedFuture(result) : durable[0].thenApply(ignored -> result);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * {@link #apply} of each request in turn, the partitions of each next {@link #AHEAD} read together
   * first ({@link #prefetch}), so that their cache misses overlap instead of each request waiting for
   * its own.
   */
  @Override
  public List<CompletableFuture<PartitionResult>> applyAll(List<PartitionRequest> requests) {
    List<CompletableFuture<PartitionResult>> futures = new java.util.ArrayList<>(requests.size());
    byte[][] ahead = new byte[Math.min(AHEAD, requests.size())][];
    for (int i = 0; i < requests.size(); i++) {
      if (i % AHEAD == 0) {
        int n = Math.min(AHEAD, requests.size() - i);
        for (int k = 0; k < n; k++) {
          ahead[k] = requests.get(i + k).partition();
        }
        prefetch(ahead, n);
      }
      futures.add(apply(requests.get(i)));
    }
    return futures;
  }

  /**
   * Answers on the calling thread unless the store syncs every write (a decision then waits for its
   * sync, which completes on the journal's thread).
   */
  @Override
  public boolean applyInto(ReusableRequest request, ReusableResult out) {
    if (!answersOnCallingThread()) {
      return false;
    }
    applyNow(request, null, Objects.requireNonNull(out, "out"));
    return true;
  }

  /** Its steps book deferred messages ({@code PartitionStep}); a booked message is journaled like any record. */
  @Override
  public boolean books() {
    return true;
  }

  /** Unless it syncs every write (a decision then waits for its sync, on the journal's thread). */
  @Override
  public boolean answersOnCallingThread() {
    return journal == null || !journal.syncsEveryWrite();
  }

  /**
   * {@link #apply} without the future, for callers that stay on one thread (replay, benchmarks). On a
   * store that syncs every write, this does not wait for the sync.
   */
  public PartitionResult applyNow(PartitionRequest request) {
    return applyNow(request, null);
  }

  /**
   * Applies {@code request} read in the one form this store reads: the thread's {@link ReusableRequest}
   * set to it (its arrays shared, not copied), and cleared after, so that it keeps nothing alive.
   */
  private PartitionResult applyNow(PartitionRequest request, CompletableFuture<Void>[] durable) {
    ReusableRequest readable = READABLE.get().set(request);
    try {
      return applyNow(readable, durable, null);
    } finally {
      readable.clear();
    }
  }

  /**
   * Applies {@code request}, answering into {@code into}, or when it is null into the segment's own
   * answer, copied out as the returned result before the segment's lock is let go.
   */
  private PartitionResult applyNow(ReusableRequest request, CompletableFuture<Void>[] durable, ReusableResult into) {
    RememberedDecisions.checkPartition(request.partition());
    if (journal != null) {
      journal.checkWritable();
    }
    int hash = segments.hash(request.partition());
    int index = segments.index(hash);
    Segment segment = segments.all[index];
    synchronized (segment) {
      long now;
      if (request.time() == PartitionRequest.STORE_TIME) {
        now = clock.millis();
      } else {
        now = request.time();
        sweepClock.callerTimeSeen();
      }
      int slot = segment.find(hash, request.partition());
      byte[] record = slot < 0 ? null : segment.records[slot];
      if (record != null) {
        now = Math.max(now, PartitionRecord.latest(record)); // per partition, time never runs backwards
      }
      CounterStates states = segment.states(request.counters());
      if (record != null) {
        PartitionRecord.readStates(record, request, now, states);
      }
      Idempotency id = request.idempotency();
      boolean lookUp = PartitionStep.looksUp(request);
      byte[] remembered = lookUp && record != null ? RecordMessages.readMessage(record, id.key(), now) : null;
      boolean inline = remembered != null;
      RememberedDecisions.Entry entry = lookUp && !inline
          ? rememberedDecisions.entry(segment, request.partition(), id.key(), now) : null;
      if (entry != null) {
        remembered = RememberedDecisions.find(segment, entry, now);
      }
      LargeLog[] large = LargeLogTable.gather(segment, request, states, now);
      long incarnation = PartitionStep.needsIncarnation(request) ? PartitionRecord.incarnation(record, now) : 0;
      ReusableResult result = into != null ? into : segment.result;
      StepWrites writes = segment.writes;
      PartitionStep.apply(request, now, states, large, remembered, incarnation, result, writes);
      if (writes.isChanged()) {
        byte[] next;
        byte[] entryRecord = null;
        // a released entry of its own is dropped after the counts; a remembered one goes inline while
        // the record holds fewer than INLINE_MAX, else in a record of its own beside it
        boolean beside = writes.forgets() && !inline;
        if (writes.remembered() != null) {
          beside = record != null && RecordMessages.messages(record, now) >= RememberedDecisions.INLINE_MAX;
          next = PartitionRecord.write(record, request, states, now, writes, !beside);
          if (beside) {
            entry = entry != null ? entry : rememberedDecisions.entry(segment, request.partition(), id.key(), now);
            entryRecord = RememberedDecisions.record(entry, writes.remembered(), writes.rememberedUntil());
          }
        } else {
          next = PartitionRecord.write(record, request, states, now, writes, false);
          if (writes.stamp() != 0) {
            result.incarnation(PartitionRecord.writtenIncarnation(next));
          }
          if (writes.forgets() && inline) {
            next = RecordMessages.withoutMessage(next, id.key()); // released: it leaves with this write
          }
        }
        // an entry of its own and, if new, the partition's record: room for both before either is written
        if (entryRecord != null && budget.makeRoom(segment, entryRecord, slot < 0 ? Segment.cost(next) + 12 : 0)) {
          slot = segment.find(hash, request.partition()); // a sweep made room: slots moved
        }
        // first: a FULL refusal must find nothing written (a large log included)
        budget.store(segment, hash, slot, next, large != null && request.operation() == Operation.DECIDE);
        if (large != null || !segment.large.isEmpty()) {
          LargeLogTable.storeAfter(segment, request, large);
        }
        CompletableFuture<Void> written = journal == null ? null
            : replayable(segment, request, record, large, entryRecord != null || beside, lookUp && !inline)
                ? journal.appendDelta(index, request, JournalDelta.crc(record), JournalDelta.crc(next),
                    now - PartitionRecord.latest(record))
                : journal.append(index, request.partition(), next);
        if (beside) {
          // an entry of its own, written or (released) dropped after the counts
          written = rememberedDecisions.write(index, segment, entry, entryRecord, written);
        }
        if (durable != null) {
          durable[0] = written;
        }
      }
      if (segment.sweepDue()) {
        segment.sweepNext(sweepClock.time());
      }
      states.clear(); // held by the segment: keep no record or state alive
      return into != null ? null : result.toResult();
    }
  }

  /**
   * Whether a decision that made a new record of {@code record} can be journaled as its step
   * ({@link JournalDelta}), replayed by {@link #replay} at recovery: a DECIDE on a record that exists,
   * not deferred (the delta does not carry what a booking may book at), that reads and writes nothing
   * but that record (no large log of the partition, no remembered
   * decision in a record of its own, written or looked up there).
   */
  private static boolean replayable(Segment segment, ReusableRequest request, byte[] record, LargeLog[] large,
      boolean entryBeside, boolean lookedUpBeside) {
    return record != null && request.operation() == Operation.DECIDE && request.booking() == null && large == null
        && !entryBeside
        && !lookedUpBeside && (segment.large.isEmpty() || segment.large.of(request.partition()).isEmpty())
        && JournalDelta.fits(request);
  }

  /**
   * Recovery ({@link JournalRecovery}): the record a journaled decision's step made of {@code base},
   * replayed at its time {@code now} as {@link #applyNow} made it (only for what {@link #replayable}
   * lets through), on the scratch of a segment. Writes nothing.
   */
  byte[] replay(byte[] base, ReusableRequest request, long now) {
    Segment segment = segments.all[0];
    synchronized (segment) {
      CounterStates states = segment.states(request.counters());
      try {
        PartitionRecord.readStates(base, request, now, states);
        Idempotency id = request.idempotency();
        byte[] remembered = PartitionStep.looksUp(request) ? RecordMessages.readMessage(base, id.key(), now) : null;
        long incarnation = PartitionStep.needsIncarnation(request) ? PartitionRecord.incarnation(base, now) : 0;
        StepWrites writes = segment.writes;
        PartitionStep.apply(request, now, states, null, remembered, incarnation, segment.result, writes);
        if (!writes.isChanged()) {
          return base;
        }
        if (writes.remembered() != null) {
          return PartitionRecord.write(base, request, states, now, writes, true);
        }
        byte[] next = PartitionRecord.write(base, request, states, now, writes, false);
        return writes.forgets() && remembered != null ? RecordMessages.withoutMessage(next, id.key()) : next;
      } finally {
        states.clear();
      }
    }
  }

  /** Recovery: the record a partition holds now (null: none). */
  byte[] restored(byte[] partition) {
    int hash = segments.hash(partition);
    Segment segment = segments.of(hash);
    synchronized (segment) {
      int slot = segment.find(hash, partition);
      return slot < 0 ? null : segment.records[slot];
    }
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    if (journal != null) {
      try {
        journal.checkWritable(); // a store that cannot write does not pass for healthy by its reads
      } catch (StoreException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    int hash = segments.hash(partition);
    Segment segment = segments.of(hash);
    synchronized (segment) {
      int slot = segment.find(hash, partition);
      long now = slot < 0 ? clock.millis() : Math.max(clock.millis(), PartitionRecord.latest(segment.records[slot]));
      List<StoredCounter> counters = slot < 0 ? List.of() : PartitionRecord.live(segment.records[slot], now);
      for (LargeLogTable.Held held : segment.large.of(partition)) {
        if (held.expiresAt > now) {
          counters = new java.util.ArrayList<>(counters);
          counters.add(new StoredCounter(held.counter.clone(), Algorithm.SLIDING_LOG, null)); // read by a dry run
        }
      }
      return CompletableFuture.completedFuture(new PartitionSnapshot(now, counters));
    }
  }

  /**
   * Deletes the partition, and with it what it remembers: its entries stay until they expire, but
   * the partition moves to a new reset generation (a record beside it, kept as long as any entry of
   * the segment may live), so none of them is read again: a release of a decision made before the
   * reset must not give back units counted after it, and a message id sent again is decided afresh.
   */
  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    RememberedDecisions.checkPartition(partition);
    if (journal != null) {
      try {
        journal.checkWritable();
      } catch (StoreException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    int hash = segments.hash(partition);
    int index = segments.index(hash);
    Segment segment = segments.all[index];
    CompletableFuture<Void> written = null;
    boolean held;
    synchronized (segment) {
      int slot = segment.find(hash, partition);
      long now = slot < 0 ? clock.millis() : Math.max(clock.millis(), PartitionRecord.latest(segment.records[slot]));
      written = rememberedDecisions.reset(index, segment, partition, now);
      slot = segment.find(hash, partition); // a new generation's insert may have moved it
      held = slot >= 0;
      if (held) {
        segment.removeAt(slot);
        segment.shrinkIfSparse();
        if (journal != null) {
          written = journal.append(index, partition, null);
        }
      }
      if (segment.large.removePartition(partition)) {
        held = true;
        if (journal != null && written == null) {
          written = journal.covering(index); // the removal is written by the flusher, with the segment's next cycle
        }
      }
    }
    boolean wasHeld = held;
    return written == null ? CompletableFuture.completedFuture(wasHeld) : written.thenApply(ignored -> wasHeld);
  }

  /**
   * Sets a partition's record during recovery ({@link Journal}): last write wins, null removes.
   * Not journaled, and not held to {@code maxBytes}: what was held before a restart is held after it.
   */
  void restore(byte[] partition, byte[] record) {
    segments.restore(partition, record);
  }

  /**
   * Sets a large sliding log during recovery ({@link Journal}): last write wins, null removes. Not
   * journaled.
   */
  void restoreLarge(byte[] partition, byte[] counter, byte[] state, long expiresAt) {
    segments.restoreLarge(partition, counter, state, expiresAt);
  }

  /** Where and how durably the store keeps its state; empty when it lives in memory only. */
  public java.util.Optional<Durability> durability() {
    return journal == null ? java.util.Optional.empty() : java.util.Optional.of(journal.durability());
  }

  /**
   * One line on what the store recovered at build, for the start log: how many partitions, from how
   * many entries, in how long, and what was damaged. Empty when the store lives in memory only.
   */
  public java.util.Optional<String> recoveryReport() {
    if (journal == null) {
      return java.util.Optional.empty();
    }
    Journal.Recovery r = journal.recovery();
    return java.util.Optional.of("recovered " + r.partitions() + " partitions and " + r.remembered()
        + " remembered decisions beside them from " + r.entries() + " entries in "
        + r.millis() + " ms" + (r.problems().isEmpty() ? "" : "; DAMAGED STATE (the intact part was loaded): "
            + String.join("; ", r.problems())));
  }

  /** The problems recovery found (damaged files), one line each; empty when all was intact. */
  public List<String> recoveryProblems() {
    return journal == null ? List.of() : journal.recovery().problems();
  }

  /**
   * Asks a durable store to take a snapshot soon, whatever the journal's size (tools, benchmarks);
   * it is written in the background and supersedes the older files when complete. No-op when the
   * store lives in memory only.
   */
  public void requestSnapshot() {
    if (journal != null) {
      journal.requestSnapshot();
    }
  }

  /** A durable store's journal (null: memory only), for tests that drive it. */
  Journal journal() {
    return journal;
  }

  /** Writes and forces what is pending to disk (a durable store), then releases the state directory. */
  @Override
  public void close() {
    suppressions.close();
    if (journal != null) {
      journal.close();
    }
  }

  /** This store, or its suppression lists ({@link SuppressionList}). */
  @Override
  public <T> java.util.Optional<T> as(Class<T> type) {
    return type.isInstance(this) ? java.util.Optional.of(type.cast(this))
        : type.isInstance(suppressions) ? java.util.Optional.of(type.cast(suppressions)) : java.util.Optional.empty();
  }

  /** See {@link SweepClock#time}. */
  long sweepTime() {
    return sweepClock.time();
  }

  /**
   * Lets the sweep drop partitions that expired before {@code time}: the caller promises that no
   * later request carries a time below it (a replay raises it to the slowest decider's progress).
   * The floor only rises; a lower value is ignored.
   */
  @Override
  public void advanceCallerTimeFloor(long time) {
    sweepClock.advanceFloor(time);
  }

  /** Drops every partition expired by the {@linkplain #sweepTime() sweep time}; returns how many. */
  public int evictExpired() {
    return segments.sweepAll(sweepTime());
  }

  /** See {@link Segments#prefetch}. */
  @Override
  public void prefetch(byte[][] partitions, int n) {
    segments.prefetch(partitions, n);
  }

  /** The partition's own record, null if none (tests: what one step reads and writes). */
  byte[] record(byte[] partition) {
    int hash = segments.hash(partition);
    Segment segment = segments.of(hash);
    synchronized (segment) {
      int slot = segment.find(hash, partition);
      return slot < 0 ? null : segment.records[slot];
    }
  }

  /** Partitions held, expired ones not yet swept included. */
  public long size() {
    return segments.size();
  }

  /**
   * Remembered decisions (message ids, release records) with records of their own beside their
   * partitions (a partition's first few are kept inline: {@link RememberedDecisions}), and reset
   * generations, expired ones not yet swept included.
   */
  public long remembered() {
    return segments.remembered();
  }

  /** Estimated heap bytes held by the tables and records. */
  public long bytes() {
    return segments.bytes();
  }

  /** The most heap the store may hold ({@link Builder#maxBytes}). */
  public long maxBytes() {
    return maxBytes;
  }

  /** Requests refused because the store was full. */
  public long rejected() {
    return budget.rejected();
  }

  /** Settings of a {@link MemoryStore}. */
  public static final class Builder {
    private Clock clock = Clock.system();
    private Durability durability;
    private long maxBytes = Runtime.getRuntime().maxMemory() / 4;
    private int segments = Math.max(16, Runtime.getRuntime().availableProcessors() * 16);
    private int hashSeed = new java.util.SplittableRandom().nextInt();
    private long clockStepGraceMs = DEFAULT_CLOCK_STEP_GRACE_MS;
    private java.util.concurrent.ThreadFactory journalThreads = Thread::new;

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

    /**
     * How far the store's clock may step back and still find every partition's time (default 10 s):
     * the sweep drops a record only this long after it expired, so a request after such a step is
     * still decided at its partition's latest time (time never runs backwards per partition). After
     * a larger step back, a partition that expired meanwhile may be gone: its request is decided at
     * its own time, as a new partition. Costs the memory of expired partitions for that long (10 s:
     * small beside windows of minutes to days; a clock that NTP steps rather than slews moves by
     * far less).
     */
    public Builder clockStepGrace(java.time.Duration grace) {
      if (grace.isNegative()) {
        throw new IllegalArgumentException("clockStepGrace must not be negative");
      }
      this.clockStepGraceMs = grace.toMillis();
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

    /**
     * Keep the state on disk as {@code durability} says; {@link #build} then recovers what the
     * directory holds. Default: memory only.
     */
    public Builder durable(Durability durability) {
      this.durability = Objects.requireNonNull(durability, "durability");
      return this;
    }

    /** Makes a durable store's journal threads; a test gives threads that run nothing and drives the journal. */
    Builder journalThreads(java.util.concurrent.ThreadFactory threads) {
      this.journalThreads = Objects.requireNonNull(threads, "threads");
      return this;
    }

    /**
     * Builds the store; a durable one first recovers its state directory (damaged files are reported
     * in {@link MemoryStore#recoveryReport()}, never fatal).
     *
     * @throws java.io.UncheckedIOException if the state directory cannot be used (not writable, or
     *     locked by another process)
     */
    public MemoryStore build() {
      return new MemoryStore(this);
    }
  }
}
