package dev.fcap.store.memory;

import dev.fcap.algorithm.CounterStates;
import dev.fcap.algorithm.LargeLog;
import dev.fcap.algorithm.PartitionStep;
import dev.fcap.model.Algorithm;
import dev.fcap.store.Clock;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.ReusableRequest;
import dev.fcap.store.ReusableResult;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoredCounter;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

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
 * write pruned or dropped by its time is gone), and within its own partition everything happens in
 * that partition's request order, like the algorithms' own pruning. Dropping <i>other</i> partitions
 * (the incremental sweep, the full sweep before {@code FULL}, {@link #evictExpired}) goes by the
 * {@linkplain #sweepTime() sweep time} instead, which no request can go below: the store's clock
 * while every request uses it; once a request has carried its own time, the lower of the clock and
 * the floor that callers raise with {@link #advanceCallerTimeFloor} (none by default: then nothing
 * is swept at all until the floor is raised). Caller times are not monotonic across callers: a
 * replay decides recipients on two threads, each at its own row's time, hours apart; sweeping by the
 * faster thread's time dropped counters the slower thread still needed, and over-admitted
 * ({@code MemoryStoreSweepTest}, {@code ReplayOracleTest} prove it no longer does).
 */
public final class MemoryStore implements Store {
  /** See {@link Builder#clockStepGrace}. */
  static final long DEFAULT_CLOCK_STEP_GRACE_MS = 10_000;
  private static final java.lang.invoke.VarHandle INT =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(int[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
  /** Per thread: {@link #applyNow(PartitionRequest, CompletableFuture[])} calls nothing that could apply again. */
  private static final ThreadLocal<ReusableRequest> READABLE = ThreadLocal.withInitial(ReusableRequest::new);
  /**
   * Requests whose partitions {@link #applyAll} reads together before applying them: enough for their
   * reads to overlap (the machine of docs/benchmarks.md keeps 16 in flight), few enough to stay in
   * the caches until applied. The replay hands the store as many rows at a time.
   */
  public static final int AHEAD = 16;
  private final Clock clock;
  private final Segment[] segments;
  private final int segmentShift;
  private final long segmentBudget;
  private final int seed;
  private final long clockStepGraceMs;
  private final LongAdder rejected = new LongAdder();
  /** Null: memory only. */
  private final Journal journal;
  private final RememberedDecisions rememberedDecisions;
  /** Set once a request carries its own time; from then on the sweep waits for the floor. */
  private volatile boolean callerTimeSeen;
  /** No later request carries a caller time below this (raised by {@link #advanceCallerTimeFloor}). */
  private final AtomicLong callerTimeFloor = new AtomicLong(Long.MIN_VALUE);

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
    this.clockStepGraceMs = b.clockStepGraceMs;
    this.journal = b.durability == null ? null : Journal.open(b.durability, segments, clock, this, b.journalThreads);
    this.rememberedDecisions = new RememberedDecisions(this::hash, journal);
    if (journal != null) {
      for (Segment s : segments) {
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
    int hash = hash(request.partition());
    int index = segmentIndex(hash);
    Segment segment = segments[index];
    synchronized (segment) {
      long now;
      if (request.time() == PartitionRequest.STORE_TIME) {
        now = clock.millis();
      } else {
        now = request.time();
        if (!callerTimeSeen) {
          callerTimeSeen = true;
        }
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
      boolean decide = request.operation() == Operation.DECIDE;
      // stored as nothing (Idempotency's note): a DECIDE stamps the partition's incarnation, a RELEASE claims
      boolean storedAsNothing = id != null && id.incarnation() != 0;
      // a decision writing its own release record (not replayable) has a fresh random key: nothing to
      // look up (its release, the same key on a RELEASE, does look it up; so does a claim's)
      boolean lookUp = id != null && (!decide || id.replayable());
      byte[] remembered = lookUp && record != null ? PartitionRecord.readMessage(record, id.key(), now) : null;
      boolean inline = remembered != null;
      RememberedDecisions.Entry entry = lookUp && !inline
          ? rememberedDecisions.entry(segment, request.partition(), id.key(), now) : null;
      if (entry != null) {
        remembered = RememberedDecisions.find(segment, entry, now);
      }
      LargeLog[] large = largeLogs(segment, request, states, now);
      boolean otherIncarnation = storedAsNothing && !decide
          && PartitionRecord.incarnation(record, now) != id.incarnation();
      ReusableResult result = into != null ? into : segment.result;
      if (otherIncarnation) {
        PartitionStep.nothing(request, now, result); // reset or expired since the decision: nothing of it is left
      } else {
        PartitionStep.apply(request, now, states, large, remembered, result);
      }
      // A dry run, a refused decision or a replayed one changes no state: leave the record as it is
      // (expired counters in it are dropped by the next write or the sweep).
      if ((request.operation() == Operation.RELEASE || request.operation() == Operation.DECIDE) && result.allowed()
          && result.replayOf() == null) {
        byte[] next;
        byte[] entryRecord = null;
        // an admitted DECIDE remembers its record, a claim's release its claim; a stamping DECIDE nothing
        boolean remembers = id != null && decide != storedAsNothing;
        // a release's entry has a record of its own (a remembering step decides below where its entry goes)
        boolean beside = id != null && !inline && !decide;
        if (remembers) {
          byte[] state = PartitionStep.remember(result, id);
          long until = decide ? now + id.horizonMs() : PartitionStep.claimExpiresAt(request);
          beside = record != null && PartitionRecord.messages(record, now) >= RememberedDecisions.INLINE_MAX;
          if (!beside) { // the usual case: the entry is written with the counts, in the record's one copy
            next = PartitionRecord.write(record, request, states, now, id.key(), state,
                until, 0, 0);
          } else {
            next = PartitionRecord.write(record, request, states, now);
            entry = entry != null ? entry : rememberedDecisions.entry(segment, request.partition(), id.key(), now);
            entryRecord = RememberedDecisions.record(entry, state, until);
          }
        } else {
          // a stamping DECIDE keeps the incarnation (or gives its own) for as long as its id may be released
          boolean stamps = decide && storedAsNothing;
          next = PartitionRecord.write(record, request, states, now, null, null, 0,
              stamps ? id.incarnation() : 0, stamps ? now + id.horizonMs() : 0);
          if (stamps) {
            result.incarnation(PartitionRecord.writtenIncarnation(next));
          }
          if (id != null && inline) {
            next = PartitionRecord.withoutMessage(next, id.key()); // released: it leaves with this write
          }
        }
        // an entry of its own and, if new, the partition's record: room for both before either is written
        if (entryRecord != null && makeRoom(segment, entryRecord, slot < 0 ? Segment.cost(next) + 12 : 0)) {
          slot = segment.find(hash, request.partition()); // a sweep made room: slots moved
        }
        // first: a FULL refusal must find nothing written (a large log included)
        store(segment, hash, slot, next, large != null && request.operation() == Operation.DECIDE);
        if (large != null || !segment.large.isEmpty()) {
          storeLargeLogs(segment, request, large);
        }
        CompletableFuture<Void> written = journal == null ? null : journal.append(index, request.partition(), next);
        if (beside) {
          // an entry of its own, written or (released) dropped after the counts
          written = rememberedDecisions.write(index, segment, entry, entryRecord, written);
        }
        if (durable != null) {
          durable[0] = written;
        }
      }
      if (segment.sweepDue()) {
        segment.sweepNext(sweepTime());
      }
      states.clear(); // held by the segment: keep no record or state alive
      return into != null ? null : result.toResult();
    }
  }

  /**
   * The {@link LargeLog} of each request counter whose rule needs one (null entries: the counter is
   * in the record; null: none is), taking over a record state written before the rule grew; and
   * the other way, a held large log as a record state when the rule shrank below the threshold.
   */
  private static LargeLog[] largeLogs(Segment segment, ReusableRequest request, CounterStates states, long now) {
    int counters = request.counters();
    LargeLog[] large = null;
    for (int i = 0; i < counters; i++) {
      CounterSpec spec = request.spec(i);
      boolean isLarge = LargeLog.isLarge(spec);
      if (!isLarge && segment.large.isEmpty()) {
        continue;
      }
      LargeLogTable.Held held = spec.algorithm() == Algorithm.SLIDING_LOG
          ? segment.large.find(request.partition(), request.key(i)) : null;
      LargeLog live = held != null && held.expiresAt > now ? held.log : null;
      if (isLarge) {
        if (large == null) {
          large = new LargeLog[counters];
        }
        large[i] = live != null ? live : LargeLog.of(states.get(i));
        if (sameCounterBefore(request, large, i)) {
          large[i] = LargeLog.of(large[i].encode()); // the same counter twice: the first write wins, as in the record
        }
        states.set(i, null);
      } else if (live != null) {
        states.set(i, live.encode());
      }
    }
    return large;
  }

  /** After a write: the request's large logs into the table; logs of rules that shrank out of it. */
  private static void storeLargeLogs(Segment segment, ReusableRequest request, LargeLog[] large) {
    for (int i = 0; i < request.counters(); i++) {
      if (large != null && large[i] != null) {
        if (!sameCounterBefore(request, large, i)) {
          segment.large.put(request.partition(), request.key(i), large[i], large[i].expiresAt(request.spec(i)));
        }
      } else if (request.spec(i).algorithm() == Algorithm.SLIDING_LOG && !segment.large.isEmpty()) {
        segment.large.remove(request.partition(), request.key(i));
      }
    }
  }

  private static boolean sameCounterBefore(ReusableRequest request, LargeLog[] large, int i) {
    for (int j = 0; j < i; j++) {
      if (large[j] != null && java.util.Arrays.equals(request.key(j), request.key(i))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Stores {@code next} at {@code slot} (-1: a new partition, held to the segment's budget).
   * {@code growsLargeLog}: the write also records into a large log, which the budget counts, so even
   * a new partition whose record holds nothing else is refused when full.
   */
  private void store(Segment segment, int hash, int slot, byte[] next, boolean growsLargeLog) {
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
  private boolean makeRoom(Segment segment, byte[] record, long extra) {
    if (segment.bytesAfterInsert(record) + extra <= segmentBudget) {
      return false;
    }
    long horizon = sweepTime();
    boolean swept = horizon >= segment.nextExpiry;
    if (swept) {
      segment.sweepAll(horizon);
    }
    if (segment.bytesAfterInsert(record) + extra > segmentBudget) {
      rejected.increment();
      throw new StoreException(StoreException.Reason.FULL, "memory store is full (maxBytes reached); "
          + "new recipients are refused until counters expire");
    }
    return swept;
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    int hash = hash(partition);
    Segment segment = segmentOf(hash);
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
    int hash = hash(partition);
    int index = segmentIndex(hash);
    Segment segment = segments[index];
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
    int hash = hash(partition);
    Segment segment = segmentOf(hash);
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

  /**
   * Sets a large sliding log during recovery ({@link Journal}): last write wins, null removes. Not
   * journaled.
   */
  void restoreLarge(byte[] partition, byte[] counter, byte[] state, long expiresAt) {
    Segment segment = segmentOf(hash(partition));
    synchronized (segment) {
      if (state == null) {
        segment.large.remove(partition, counter);
      } else {
        segment.large.put(partition, counter, LargeLog.of(state), expiresAt);
      }
    }
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
    if (journal != null) {
      journal.close();
    }
  }

  /**
   * The time by which other partitions are expired: the store's clock less the
   * {@linkplain Builder#clockStepGrace clock-step grace}, or, once requests have carried their own times, the lower of that
   * and the caller-time floor.
   */
  long sweepTime() {
    long clockNow = clock.millis() - clockStepGraceMs;
    return callerTimeSeen ? Math.min(clockNow, callerTimeFloor.get()) : clockNow;
  }

  /**
   * Lets the sweep drop partitions that expired before {@code time}: the caller promises that no
   * later request carries a time below it (a replay raises it to the slowest decider's progress).
   * The floor only rises; a lower value is ignored.
   */
  @Override
  public void advanceCallerTimeFloor(long time) {
    callerTimeFloor.accumulateAndGet(time, Math::max);
  }

  /** Drops every partition expired by the {@linkplain #sweepTime() sweep time}; returns how many. */
  public int evictExpired() {
    int dropped = 0;
    long now = sweepTime();
    for (Segment s : segments) {
      synchronized (s) {
        dropped += s.sweepAll(now);
      }
    }
    return dropped;
  }

  /**
   * Reads, for each partition, the lines of its home slot in both tables, then its own slot (found
   * by probing from there, in lines now read) and the first line of its record, without taking the
   * lock: each step for every partition before the next, so that the reads of one partition do not
   * wait for another's. A decision on one of millions of partitions otherwise waits for two cache
   * misses in a row (the slot, then the record it points to), about 250 ns each on the machine of
   * docs/benchmarks.md, which can have 16 such reads in flight at once ("Misses that overlap").
   * Reading the home slot's record instead took the replay 1.1x as long: at the tables' load (0.375
   * to 0.75) many partitions sit further on.
   *
   * <p>The reads race with writers on purpose and change nothing: a table replaced by a resize, or a
   * record by a write, is still an array whose own length bounds the read, and whatever is read is
   * thrown away. Nothing is decided from it; the decision that follows reads under the lock.
   */
  @Override
  public void prefetch(byte[][] partitions, int n) {
    Lookahead ahead = LOOKAHEAD.get();
    n = Math.min(n, Lookahead.SIZE);
    for (int k = 0; k < n; k++) {
      ahead.hashes[k] = partitions[k] == null ? 0 : hash(partitions[k]);
    }
    int touched = 0;
    for (int k = 0; k < n; k++) {
      if (partitions[k] != null) {
        touched += segmentOf(ahead.hashes[k]).readHome(ahead.hashes[k]);
      }
    }
    for (int k = 0; k < n; k++) {
      if (partitions[k] != null) {
        touched += segmentOf(ahead.hashes[k]).readRecord(ahead.hashes[k]);
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

  /** The partition's own record, null if none (tests: what one step reads and writes). */
  byte[] record(byte[] partition) {
    int hash = hash(partition);
    Segment segment = segmentOf(hash);
    synchronized (segment) {
      int slot = segment.find(hash, partition);
      return slot < 0 ? null : segment.records[slot];
    }
  }

  /** Partitions held, expired ones not yet swept included. */
  public long size() {
    long n = 0;
    for (Segment s : segments) {
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
  public long remembered() {
    long n = 0;
    for (Segment s : segments) {
      synchronized (s) {
        n += s.storePrivate;
      }
    }
    return n;
  }

  /** Estimated heap bytes held by the tables and records. */
  public long bytes() {
    long n = 0;
    for (Segment s : segments) {
      synchronized (s) {
        n += s.bytes + s.large.bytes + s.tableBytes();
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
    return segments[segmentIndex(hash)];
  }

  private int segmentIndex(int hash) {
    return (int) ((hash & 0xFFFF_FFFFL) >>> segmentShift);
  }

  /**
   * A seeded hash of the key. A store-private key (an entry, a reset generation) takes its segment
   * bits from its partition's hash, so that one lock covers the partition and what it remembers,
   * and its slot bits from its own.
   */
  private int hash(byte[] key) {
    int h = hash(key, 0);
    int from = RememberedDecisions.partitionAt(key);
    if (from == 0 || segments.length == 1) {
      return h;
    }
    int segmentBits = -1 << segmentShift;
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
