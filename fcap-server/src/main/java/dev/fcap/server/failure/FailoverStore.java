package dev.fcap.server.failure;

import dev.fcap.store.ForwardingStore;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Store} decorator that bounds every store call by a deadline, tells load from an outage,
 * and during an outage decides on an in-process {@link MemoryStore} whose admissions it writes back
 * to the store before it leaves degraded mode.
 *
 * <p><b>Invariant.</b> Every admission is counted once in the store, eventually: a local (degraded)
 * decision never repeats a store call that may have run, and what the outage store admitted is
 * merged into the store's counters at its original time before decisions go back to the store.
 *
 * <p><b>Load is not an outage.</b> A call past its deadline ({@code store.timeout}) fails with
 * {@link Reason#TIMEOUT}: the caller gets backpressure (HTTP 429 / RESOURCE_EXHAUSTED), never a local
 * decision. A batch is split into calls of at most {@code callSize} requests, sent one after another,
 * each with its own deadline; after a call that missed it, the rest of the batch is not sent (a slow
 * store gets no more load) and fails as busy. An outage is declared only by a probe: a failed call
 * (timed out, unreachable) starts a failure streak and schedules a probe a {@code window} later; the
 * probe waits up to another {@code window} for any answer. If nothing answered since the streak began
 * (no call, no late answer, not the probe) the outage begins: a refusing store after one window, a
 * silent one after two. Any answer, however late, ends the streak: an overloaded store that answers
 * late is backpressure, never an outage, and so is a slow start. A full store or a script error is
 * not an outage at all (the store answered). A request whose new partition a full embedded store
 * cannot hold goes to {@link OutageStore#decideWhenFull} ({@code failure.full}), and the refusal to
 * {@link Fullness}, which logs when the store becomes full and when it stops.
 *
 * <p><b>What a timeout means.</b> The call may still run in Redis. The deadline here is shorter than
 * the client's own command timeout, so the late answer is usually seen: if it admitted, the
 * admission is released at once ({@link #lateReleases()}), so the caller's 429 is exact. Only a call
 * whose answer never comes (the connection dropped with it in flight) may stay counted: that can only
 * over-count, i.e. refuse too much, never admit too much.
 *
 * <p><b>State.</b> One immutable state, replaced by CAS ({@link Health}): the start of the current
 * failure streak, and the outage (null while up): its start and the journal of what the outage store
 * admitted. Going down: {@code compareAndSet(seen, down)}; recovering: the journal is written back and
 * only then {@code compareAndSet(down, up)}. A call reads one snapshot. The outage store itself lives
 * as long as this decorator ({@link OutageStore}).
 *
 * <p><b>Parts.</b> {@link Deadlines} bounds every call and tells {@link Health} each answer and failure;
 * {@link Health} runs the probes and declares and ends outages; {@link OutageStore} decides during one
 * and writes its {@link OutageJournal} back. This class routes each call by the state it reads.
 *
 * <p><b>Clock.</b> The injected {@link Clock} and {@link Scheduler} time deadlines, the window and the
 * probes; the local store decides at the clock too. Worked example (timeout 250 ms, window 1 s,
 * probe 1 s): t0 a call times out (429; streak starts; probe due at t0+1 s); t0+300 ms a call
 * succeeds (streak over, nothing declared). Or: the store refuses connections; at t0+1 s the probe is
 * refused too: outage, local decisions (degraded); each later probe reads the store; the first that
 * passes writes the journal back, then the store decides again.
 *
 * <p><b>During an outage</b> a request of a category whose action is {@code local} is decided by the
 * outage store (its result marked {@link PartitionResult#degraded()}); any other fails at once with
 * {@link Down}, and the decision service applies allow or deny. Per node, the local store enforces the
 * rules on what this node admitted during outages only: the store's limit plus, per node cut off from
 * it, one more limit per window (over all outages in that window); after the write-back the store
 * counts it all and admits nothing more until the window frees.
 *
 * <p><b>A store that lost its data</b> (a Redis restarted empty) answers as if nothing happened:
 * {@link StoreResets} checks its identity every probe interval, logs and counts a loss, and with
 * {@code failure.storeReset: policy} has {@link Health} hold an outage that no probe ends before the
 * longest window of the rules has passed ({@link Health.Outage#resetUntil}); the store answers
 * meanwhile, so it is ready and not {@link #down()}.
 *
 * <p>Tested as a trace on a manual clock and scheduler ({@code FailoverStoreTest}, {@code
 * StoreResetTest}), and against real Redis processes stopped, paused, killed and restarted empty
 * ({@code RedisOutageIT}, {@code StoreResetIT}).
 */
public final class FailoverStore extends ForwardingStore {
  private static final Logger LOG = LoggerFactory.getLogger(FailoverStore.class);

  private final FailurePolicy policy;
  private final Health health;
  private final Deadlines deadlines;
  private final OutageStore outage;
  private final Fullness fullness;
  private final StoreResets resets;
  private final Clock clock;
  private final LongAdder lateReleases = new LongAdder();

  /**
   * A request the failover store does not send to the store because the store is down, or because it
   * lost its data and the failure policy decides until {@link #resetUntil} ({@code failure.storeReset}).
   */
  public static final class Down extends StoreException {
    private static final long serialVersionUID = 1L;
    private final long resetUntil;

    Down(String message) {
      this(message, 0);
    }

    Down(String message, long resetUntil) {
      super(Reason.UNAVAILABLE, message);
      this.resetUntil = resetUntil;
    }

    /** Until when (epoch ms) the failure policy decides because the store lost its data; 0 in an outage. */
    public long resetUntil() {
      return resetUntil;
    }
  }

  /**
   * The last loss of the store's data noticed: when, why (which identity key was missing or replaced),
   * and until when (epoch ms) the failure policy decides because of it; 0 with
   * {@code failure.storeReset: decide}.
   */
  public record Reset(long noticedAt, String why, long policyUntil) {}

  FailoverStore(Store delegate, FailurePolicy policy, Clock clock, Scheduler scheduler, Executor delivery,
      LongSupplier longestWindowMs) {
    super(delegate);
    this.policy = policy;
    this.clock = clock;
    this.health = new Health(delegate, policy, clock, scheduler, this::recover, this::streakEnded);
    this.deadlines = new Deadlines(delegate, scheduler, delivery, policy.timeout().toMillis(), health);
    this.outage = new OutageStore(policy, clock, deadlines);
    this.fullness = new Fullness(clock, scheduler, policy.fullQuietMs(), () -> delegate.as(MemoryStore.class)
        .map(m -> m.bytes() + " of " + m.maxBytes() + " bytes, " + m.size() + " partitions").orElse("?"));
    this.resets = new StoreResets(delegate, policy, clock, scheduler, longestWindowMs, health);
    resets.start();
  }

  /**
   * Decorates a store with {@code policy}'s deadline and outage handling; the answers of a call of
   * several requests are handed on on {@code delivery} (see {@link Deadlines#settleWithin}).
   */
  public static Function<Store, FailoverStore> newDecorator(FailurePolicy policy, Clock clock, Scheduler scheduler,
      Executor delivery) {
    return newDecorator(policy, clock, scheduler, delivery, () -> 0);
  }

  /**
   * {@link #newDecorator(FailurePolicy, Clock, Scheduler, Executor)}, with the longest window of the
   * rules in force ({@code longestWindowMs}, read when a store that lost its data is noticed): how long
   * the failure policy decides then, with {@code failure.storeReset: policy}.
   */
  public static Function<Store, FailoverStore> newDecorator(FailurePolicy policy, Clock clock, Scheduler scheduler,
      Executor delivery, LongSupplier longestWindowMs) {
    return store -> new FailoverStore(store, policy, clock, scheduler, delivery, longestWindowMs);
  }

  /** {@link #newDecorator(FailurePolicy, Clock, Scheduler, Executor)} handing answers on in place (tests). */
  public static Function<Store, FailoverStore> newDecorator(FailurePolicy policy, Clock clock, Scheduler scheduler) {
    return newDecorator(policy, clock, scheduler, Runnable::run);
  }

  /** True during an outage: the store failed, and requests are answered by the failure policy. */
  public boolean down() {
    Health.Outage o = health.outage();
    return o != null && !o.reset(clock.millis());
  }

  /**
   * True while requests are answered by the failure policy: during an outage, and after the store
   * lost its data until the longest window passed ({@code failure.storeReset: policy}).
   */
  public boolean policyDecides() {
    return health.outage() != null;
  }

  /** Until when (epoch ms) the failure policy decides because the store lost its data; 0 if it does not now. */
  public long resetUntil() {
    Health.Outage o = health.outage();
    return o != null && o.reset(clock.millis()) ? o.resetUntil() : 0;
  }

  /** Losses of the store's data noticed since start (a missing or replaced identity, see {@link Store#checkIdentity}). */
  public long resets() {
    return resets.resets();
  }

  /** The last loss of the store's data noticed since start, or null. */
  public Reset lastReset() {
    return resets.last();
  }

  /**
   * True while the embedded store is full: it refused a new partition within the last
   * {@link FailurePolicy#fullQuietMs()} (see {@link Fullness}).
   */
  public boolean full() {
    return fullness.full();
  }

  /** The delay the store's last full refusal gave until room may free; -1 if it could not say. */
  public long fullRetryAfterMs() {
    return fullness.retryAfterMs();
  }

  /** Admissions that came back after their deadline and were released (the caller had a 429). */
  public long lateReleases() {
    return lateReleases.sum();
  }

  /** Steps of the outage store written back to the store. */
  public long writtenBack() {
    return outage.writtenBack();
  }

  /** Outages declared since start. */
  public long outages() {
    return health.outages();
  }

  /**
   * Whether the store answers a read within the deadline and no outage is in force (for {@code /ready}).
   * After the store lost its data it is ready (it answers, and every node shares its loss), whoever decides.
   */
  public CompletableFuture<Boolean> ready() {
    if (down()) {
      return CompletableFuture.completedFuture(false);
    }
    CompletableFuture<PartitionSnapshot> read = new CompletableFuture<>();
    deadlines.settleWithin(List.of(delegate().read(Health.PROBE_PARTITION)), List.of(read), (i, r) -> {});
    return read.handle((r, error) -> error == null);
  }

  // --- Store -------------------------------------------------------------------------------------

  @Override
  public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
    return applyAll(List.of(request)).get(0);
  }

  @Override
  public List<CompletableFuture<PartitionResult>> applyAll(List<PartitionRequest> requests) {
    List<CompletableFuture<PartitionResult>> out = new ArrayList<>(requests.size());
    for (int i = 0; i < requests.size(); i++) {
      out.add(new CompletableFuture<>());
    }
    send(requests, 0, out);
    return out;
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    if (health.outage() != null) {
      return outage.read(partition);
    }
    CompletableFuture<PartitionSnapshot> out = new CompletableFuture<>();
    deadlines.settleWithin(List.of(Deadlines.call(() -> delegate().read(partition))), List.of(out), (i, r) -> {});
    return out;
  }

  /**
   * Forgets a partition in the store; refused while the failure policy decides (the store must forget
   * it, not only this node, and the node's journal would write it back).
   */
  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    long resetUntil = resetUntil();
    if (resetUntil > 0) {
      return CompletableFuture.failedFuture(new Down("the store lost its data and the failure policy decides until "
          + resetUntil + " (failure.storeReset); an erasure must reach the store: try again then", resetUntil));
    }
    if (health.outage() != null) {
      return CompletableFuture.failedFuture(new Down("the store is down; an erasure must reach it: try again later"));
    }
    CompletableFuture<Boolean> out = new CompletableFuture<>();
    deadlines.settleWithin(List.of(Deadlines.call(() -> delegate().delete(partition))), List.of(out), (i, r) -> {});
    return out;
  }

  /**
   * A hint for the store that decides now: the store while up, the outage store during an outage.
   */
  @Override
  public void prefetch(byte[][] partitions, int n) {
    if (health.outage() != null) {
      outage.local().prefetch(partitions, n);
    } else {
      super.prefetch(partitions, n);
    }
  }

  /**
   * Passes the promise to the outage store always (it holds for every request it decides), and to the
   * store only while up: during an outage the write-back may still send steps from before a floor
   * raised then, at their own times, so the store hears of such a floor from the next one raised
   * after the outage.
   */
  @Override
  public void advanceCallerTimeFloor(long time) {
    outage.local().advanceCallerTimeFloor(time);
    if (health.outage() == null) {
      super.advanceCallerTimeFloor(time);
    }
  }

  @Override
  public void close() {
    resets.close();
    Health.Outage o = health.outage();
    if (o != null && !o.journal().isEmpty()) {
      LOG.warn("closing during an outage: {} locally admitted decisions were not written back to the store",
          o.journal().size());
    }
    super.close();
  }

  // --- calls with a deadline ---------------------------------------------------------------------

  /** Sends requests {@code from..} in calls of {@code callSize}, one after the other, each with its deadline. */
  private void send(List<PartitionRequest> requests, int from, List<CompletableFuture<PartitionResult>> out) {
    int n = requests.size();
    Health.Outage o = health.outage();
    if (o != null) {
      for (int i = from; i < n; i++) {
        outage.decide(o, requests.get(i), out.get(i));
      }
      return;
    }
    int to = Math.min(n, from + policy.callSize());
    List<PartitionRequest> chunk = requests.subList(from, to);
    List<CompletableFuture<PartitionResult>> sent = deadlines.callAll(chunk);
    AtomicBoolean next = new AtomicBoolean();
    Runnable continuation = () -> {
      if (to < n && next.compareAndSet(false, true)) {
        boolean missed = false;
        for (int i = from; i < to; i++) {
          missed |= Deadlines.timedOut(out.get(i));
        }
        if (missed) {
          for (int i = to; i < n; i++) {
            out.get(i).completeExceptionally(
                Deadlines.busy("not sent: an earlier call of this batch missed its deadline"));
          }
        } else {
          send(requests, to, out);
        }
      }
    };
    List<CompletableFuture<PartitionResult>> answered = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) {
      PartitionRequest request = requests.get(i);
      CompletableFuture<PartitionResult> target = out.get(i);
      CompletableFuture<PartitionResult> answer = new CompletableFuture<>();
      answer.whenComplete((result, error) -> {
        if (error == null) {
          target.complete(result);
        } else if (error instanceof StoreException se && se.reason() == Reason.FULL) {
          fullness.refused(se instanceof StoreException.Full f ? f.retryAfterMs() : -1);
          outage.decideWhenFull(request, se, target);
        } else {
          target.completeExceptionally(error);
        }
      });
      answered.add(answer);
    }
    deadlines.settleWithin(sent, answered, (i, late) -> undoLate(chunk.get(i), late));
    CompletableFuture.allOf(out.subList(from, to).toArray(CompletableFuture[]::new))
        .whenComplete((v, e) -> continuation.run());
  }

  /** An admission or booking whose caller already had a timeout: take it back, so the 429 recorded nothing. */
  private void undoLate(PartitionRequest request, PartitionResult result) {
    if (request.operation() == Operation.DECIDE && (result.allowed() || result.bookedAt() != 0)) {
      lateReleases.increment();
      Deadlines.call(() -> delegate().apply(lateRelease(request, result))).whenComplete((r, e) -> {
        if (e != null) {
          LOG.warn("could not release a late admission (it stays counted: refuses too much, never too little): {}",
              e.toString());
        }
      });
    }
  }

  /**
   * The release of a late answer: at the instant it was recorded at; a decision stored as nothing is
   * claimed in the incarnation the partition answered (its own, if it had one), not in the request's
   * candidate.
   */
  private static PartitionRequest lateRelease(PartitionRequest request, PartitionResult result) {
    PartitionRequest release = request.asRelease(result.recordedAt());
    Idempotency id = request.idempotency();
    return id == null || id.incarnation() == 0 || result.incarnation() == 0 ? release
        : release.withIdempotency(new Idempotency(id.key(), id.horizonMs(), id.tail(), false, result.incarnation()));
  }

  /** Called when the store answers after failing calls, or an outage ended: it may have restarted empty. */
  private void streakEnded() {
    resets.checkSoon();
  }

  /** Called by a probe the store answered during an outage: write the journal back, then go up. */
  private CompletableFuture<Void> recover(Health.State seen) {
    return outage.recover(seen, health);
  }
}
