package dev.fcap.server.failure;

import dev.fcap.store.Clock;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import dev.fcap.store.memory.MemoryStore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
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
 * not an outage at all (the store answered).
 *
 * <p><b>What a timeout means.</b> The call may still run in Redis. The deadline here is shorter than
 * the client's own command timeout, so the late answer is usually seen: if it admitted, the
 * admission is released at once ({@link #lateReleases()}), so the caller's 429 is exact. Only a call
 * whose answer never comes (the connection dropped with it in flight) may stay counted: that can only
 * over-count, i.e. refuse too much, never admit too much.
 *
 * <p><b>State.</b> One immutable {@link State} in an {@link AtomicReference}, replaced by CAS: the start
 * of the current failure streak, and the {@link Outage} (null while up): its start, its local store and
 * the journal of what the local store admitted. Going down: {@code compareAndSet(seen, down)};
 * recovering: the journal is written back and only then {@code compareAndSet(down, up)}. A call reads
 * one snapshot. The local store itself lives as long as this decorator (see {@link #local}).
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
 * <p>Tested as a trace on a manual clock and scheduler ({@code FailoverStoreTest}), and against real
 * Redis processes stopped, paused and killed ({@code RedisOutageIT}).
 */
public final class FailoverStore implements Store {
  private static final Logger LOG = LoggerFactory.getLogger(FailoverStore.class);
  private static final byte[] PROBE_PARTITION = {'f', 'c', 'a', 'p', ':', 'p', 'r', 'o', 'b', 'e'};
  private static final long NONE = Long.MIN_VALUE;

  private final Store delegate;
  private final FailurePolicy policy;
  private final Clock clock;
  private final Scheduler scheduler;
  private final Executor delivery;
  private final long timeoutMs;
  private final AtomicReference<State> state = new AtomicReference<>(State.UP);
  private final AtomicBoolean probing = new AtomicBoolean();
  /**
   * The outage store, kept across outages: its counters expire by themselves, and a recipient whose
   * outages flap within one window is held to one limit per node, not one per outage.
   */
  private final MemoryStore local;
  private final LongAdder lateReleases = new LongAdder();
  private final LongAdder writtenBack = new LongAdder();
  private final LongAdder outages = new LongAdder();

  /** Since when the store has been failing (NONE: it is not), and the outage (null: up). */
  record State(long failingSince, Outage outage) {
    static final State UP = new State(NONE, null);
  }

  /** One outage: since when, the store deciding for it, and what that store admitted. */
  record Outage(long since, MemoryStore local, Journal journal) {}

  /** A request the failover store does not send to the store because the store is down. */
  public static final class Down extends StoreException {
    private static final long serialVersionUID = 1L;

    Down(String message) {
      super(Reason.UNAVAILABLE, message);
    }
  }

  FailoverStore(Store delegate, FailurePolicy policy, Clock clock, Scheduler scheduler, Executor delivery) {
    this.delegate = delegate;
    this.policy = policy;
    this.clock = clock;
    this.scheduler = scheduler;
    this.delivery = delivery;
    this.timeoutMs = policy.timeout().toMillis();
    this.local = MemoryStore.builder().clock(clock).maxBytes(Math.max(1 << 20, Runtime.getRuntime().maxMemory() / 8))
        .build();
  }

  /**
   * Decorates a store with {@code policy}'s deadline and outage handling; the answers of a call of
   * several requests are handed on on {@code delivery} (see {@link #settleWithin}).
   */
  public static Function<Store, FailoverStore> newDecorator(FailurePolicy policy, Clock clock, Scheduler scheduler,
      Executor delivery) {
    return store -> new FailoverStore(store, policy, clock, scheduler, delivery);
  }

  /** {@link #newDecorator(FailurePolicy, Clock, Scheduler, Executor)} handing answers on in place (tests). */
  public static Function<Store, FailoverStore> newDecorator(FailurePolicy policy, Clock clock, Scheduler scheduler) {
    return newDecorator(policy, clock, scheduler, Runnable::run);
  }

  public Store delegate() {
    return delegate;
  }

  @Override
  public <T> Optional<T> as(Class<T> type) {
    return type.isInstance(this) ? Optional.of(type.cast(this)) : delegate.as(type);
  }

  /** True during an outage: requests are answered by the failure policy. */
  public boolean down() {
    return state.get().outage != null;
  }

  /** Admissions that came back after their deadline and were released (the caller had a 429). */
  public long lateReleases() {
    return lateReleases.sum();
  }

  /** Steps of the outage store written back to the store. */
  public long writtenBack() {
    return writtenBack.sum();
  }

  /** Outages declared since start. */
  public long outages() {
    return outages.sum();
  }

  /** Whether the store answers a read within the deadline and no outage is in force (for {@code /ready}). */
  public CompletableFuture<Boolean> ready() {
    if (down()) {
      return CompletableFuture.completedFuture(false);
    }
    CompletableFuture<PartitionSnapshot> read = new CompletableFuture<>();
    settleWithin(List.of(delegate.read(PROBE_PARTITION)), List.of(read), (i, r) -> {});
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
    Outage o = state.get().outage;
    if (o != null) {
      return o.local.read(partition);
    }
    CompletableFuture<PartitionSnapshot> out = new CompletableFuture<>();
    settleWithin(List.of(call(() -> delegate.read(partition))), List.of(out), (i, r) -> {});
    return out;
  }

  /** Forgets a partition in the store; refused during an outage (the store must forget it, not only this node). */
  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    Outage o = state.get().outage;
    if (o != null) {
      return CompletableFuture.failedFuture(new Down("the store is down; an erasure must reach it: try again later"));
    }
    CompletableFuture<Boolean> out = new CompletableFuture<>();
    settleWithin(List.of(call(() -> delegate.delete(partition))), List.of(out), (i, r) -> {});
    return out;
  }

  @Override
  public long now() {
    return delegate.now();
  }

  @Override
  public void close() {
    Outage o = state.get().outage;
    if (o != null && !o.journal.isEmpty()) {
      LOG.warn("closing during an outage: {} locally admitted decisions were not written back to the store",
          o.journal.size());
    }
    delegate.close();
  }

  // --- calls with a deadline ---------------------------------------------------------------------

  /** Sends requests {@code from..} in calls of {@code callSize}, one after the other, each with its deadline. */
  private void send(List<PartitionRequest> requests, int from, List<CompletableFuture<PartitionResult>> out) {
    int n = requests.size();
    Outage o = state.get().outage;
    if (o != null) {
      for (int i = from; i < n; i++) {
        decideLocally(o, requests.get(i), out.get(i));
      }
      return;
    }
    int to = Math.min(n, from + policy.callSize());
    List<PartitionRequest> chunk = requests.subList(from, to);
    List<CompletableFuture<PartitionResult>> sent = callAll(chunk);
    AtomicBoolean next = new AtomicBoolean();
    Runnable continuation = () -> {
      if (to < n && next.compareAndSet(false, true)) {
        boolean missed = false;
        for (int i = from; i < to; i++) {
          missed |= timedOut(out.get(i));
        }
        if (missed) {
          for (int i = to; i < n; i++) {
            out.get(i).completeExceptionally(busy("not sent: an earlier call of this batch missed its deadline"));
          }
        } else {
          send(requests, to, out);
        }
      }
    };
    settleWithin(sent, out.subList(from, to), (i, late) -> undoLate(chunk.get(i), late));
    CompletableFuture.allOf(out.subList(from, to).toArray(CompletableFuture[]::new))
        .whenComplete((v, e) -> continuation.run());
  }

  private List<CompletableFuture<PartitionResult>> callAll(List<PartitionRequest> chunk) {
    try {
      return delegate.applyAll(chunk);
    } catch (RuntimeException e) {
      return chunk.stream().map(r -> CompletableFuture.<PartitionResult>failedFuture(e)).toList();
    }
  }

  private static <T> CompletableFuture<T> call(java.util.function.Supplier<CompletableFuture<T>> c) {
    try {
      return c.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** What to do with an answer that came after its deadline. */
  @FunctionalInterface
  private interface Late<T> {
    void arrived(int index, T value);
  }

  /**
   * Completes {@code out[i]} from {@code sent[i]}, or with TIMEOUT if the call does not answer within
   * the deadline (one timer for the whole call, none if it already answered). Feeds the health state.
   *
   * <p>An answer is taken when it arrives (a cheap CAS on the client's thread), and the answers of a
   * call of several requests are handed on together on the delivery executor once every request of
   * the call is settled: the work they trigger downstream (decisions, responses) must not run on the
   * client's I/O thread ahead of the answers still to be read there, or the deadline would measure
   * this server's own work instead of the store.
   */
  private <T> void settleWithin(List<CompletableFuture<T>> sent, List<CompletableFuture<T>> out, Late<T> late) {
    int n = sent.size();
    boolean done = sent.stream().allMatch(CompletableFuture::isDone);
    AtomicIntegerArray fate = new AtomicIntegerArray(n); // 0 waiting, 1 answered, 2 missed the deadline
    Object[] values = new Object[n];
    Throwable[] errors = new Throwable[n];
    AtomicInteger settled = new AtomicInteger();
    Runnable deliver = () -> {
      for (int i = 0; i < n; i++) {
        if (fate.get(i) == 1) {
          if (errors[i] == null) {
            @SuppressWarnings("unchecked")
            T value = (T) values[i];
            out.get(i).complete(value);
          } else {
            out.get(i).completeExceptionally(errors[i]);
          }
        }
      }
    };
    Runnable whenSettled = () -> {
      if (n == 1 || done) {
        deliver.run();
      } else {
        delivery.execute(deliver);
      }
    };
    Runnable cancel = () -> {};
    if (!done) {
      cancel = scheduler.schedule(() -> {
        int missed = 0;
        for (int i = 0; i < n; i++) {
          if (fate.compareAndSet(i, 0, 2)) {
            missed++;
            out.get(i).completeExceptionally(new StoreException(Reason.TIMEOUT,
                "the store did not answer within store.timeout (" + timeoutMs + " ms)"));
          }
        }
        if (missed > 0) {
          failed();
          if (settled.addAndGet(missed) == n) {
            whenSettled.run();
          }
        }
      }, timeoutMs);
    }
    Runnable stopTimer = cancel;
    for (int i = 0; i < n; i++) {
      int at = i;
      sent.get(i).whenComplete((value, error) -> {
        StoreException se = error == null ? null : storeException(error);
        if (se == null) {
          succeeded();
        }
        if (!fate.compareAndSet(at, 0, 1)) {
          if (se == null) {
            late.arrived(at, value);
          }
          return;
        }
        if (se != null && (se.reason() == Reason.TIMEOUT || se.reason() == Reason.UNAVAILABLE)) {
          failed();
        }
        values[at] = value;
        errors[at] = se;
        if (settled.incrementAndGet() == n) {
          stopTimer.run();
          whenSettled.run();
        }
      });
    }
  }

  /** An admission whose caller already had a timeout: take it back, so the 429 recorded nothing. */
  private void undoLate(PartitionRequest request, PartitionResult result) {
    if (request.operation() == Operation.DECIDE && result.allowed()) {
      lateReleases.increment();
      call(() -> delegate.apply(request.asRelease(result.time()))).whenComplete((r, e) -> {
        if (e != null) {
          LOG.warn("could not release a late admission (it stays counted: refuses too much, never too little): {}",
              e.toString());
        }
      });
    }
  }

  private static boolean timedOut(CompletableFuture<?> f) {
    if (!f.isCompletedExceptionally()) {
      return false;
    }
    try {
      f.join();
      return false;
    } catch (CompletionException | java.util.concurrent.CancellationException e) {
      return e.getCause() instanceof StoreException se && se.reason() == Reason.TIMEOUT;
    }
  }

  static StoreException storeException(Throwable error) {
    Throwable t = error;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof StoreException se) {
      return se;
    }
    if (t instanceof java.util.concurrent.TimeoutException) {
      return new StoreException(Reason.TIMEOUT, String.valueOf(t.getMessage()), t);
    }
    throw t instanceof RuntimeException re ? re : new CompletionException(t);
  }

  private static StoreException busy(String why) {
    return new StoreException(Reason.TIMEOUT, why);
  }

  // --- health: the failure streak and the outage -------------------------------------------------

  private void succeeded() {
    State s = state.get();
    if (s.failingSince != NONE && s.outage == null) {
      state.compareAndSet(s, State.UP);
    }
  }

  /** A call failed (timed out, unreachable): start a streak, and the probe that may end in an outage. */
  private void failed() {
    long now = clock.millis();
    State s = state.get();
    if (s.outage == null && s.failingSince == NONE && state.compareAndSet(s, new State(now, null))) {
      probe(policy.window().toMillis());
    }
  }

  /**
   * A probe failed: the outage begins if the streak is at least a window old. Only a probe declares
   * an outage, never a caller's call: under load callers time out while the store still answers,
   * late, and any answer (a late one too) ends the streak.
   */
  private void probeFailed() {
    long now = clock.millis();
    while (true) {
      State s = state.get();
      if (s.outage != null || s.failingSince == NONE || now - s.failingSince < policy.window().toMillis()) {
        return;
      }
      Outage outage = new Outage(now, local, new Journal(policy.journalCapacity()));
      if (state.compareAndSet(s, new State(s.failingSince, outage))) {
        outages.increment();
        LOG.warn("store outage: failing since {} ms; the failure policy decides until the store answers again "
            + "(probe every {} ms)", now - s.failingSince, policy.probeInterval().toMillis());
        return;
      }
    }
  }

  /** Schedules a probe chain unless one runs; it reschedules itself until the store is up. */
  private void probe(long delayMs) {
    if (probing.compareAndSet(false, true)) {
      scheduler.schedule(this::probeNow, delayMs);
    }
  }

  private void probeNow() {
    State seen = state.get();
    if (seen == State.UP || (seen.outage == null && seen.failingSince == NONE)) {
      probing.set(false);
      if (state.get().failingSince != NONE) {
        probe(policy.probeInterval().toMillis()); // a streak began while this chain was ending
      }
      return;
    }
    // a probe waits a whole window for its answer (not store.timeout): it asks "is anyone there",
    // not "is it fast"; a refusal fails it at once
    CompletableFuture<PartitionSnapshot> read = new CompletableFuture<>();
    settleQuietly(call(() -> delegate.read(PROBE_PARTITION)), read, policy.window().toMillis());
    read.whenComplete((r, error) -> {
      if (error == null && seen.outage != null) {
        recover(seen).whenComplete((v, e) -> nextProbe());
        return;
      }
      if (error == null) {
        succeeded();
      } else if (seen.outage == null) {
        probeFailed();
      }
      nextProbe();
    });
  }

  private void nextProbe() {
    probing.set(false);
    if (state.get() != State.UP && (state.get().outage != null || state.get().failingSince != NONE)) {
      probe(policy.probeInterval().toMillis());
    }
  }

  private <T> void settleQuietly(CompletableFuture<T> sent, CompletableFuture<T> out, long deadlineMs) {
    Runnable cancel = sent.isDone() ? () -> {} : scheduler.schedule(
        () -> out.completeExceptionally(new StoreException(Reason.TIMEOUT, "probe timed out")), deadlineMs);
    sent.whenComplete((v, e) -> {
      cancel.run();
      if (e == null) {
        succeeded(); // an answer, however late: the store is there
        out.complete(v);
      } else {
        out.completeExceptionally(e);
      }
    });
  }

  // --- the outage store and the write-back -------------------------------------------------------

  private void decideLocally(Outage o, PartitionRequest r, CompletableFuture<PartitionResult> out) {
    if (policy.actionFor(r.category()) != FailureAction.LOCAL) {
      out.completeExceptionally(new Down("the store is down; category '" + r.category() + "' is not decided locally"));
      return;
    }
    boolean records = r.operation() == Operation.DECIDE || r.operation() == Operation.RELEASE;
    if (records && o.journal.full()) {
      out.completeExceptionally(new StoreException(Reason.FULL, "the outage journal is full (failure.journal)"));
      return;
    }
    Idempotency id = r.idempotency();
    if (r.operation() == Operation.DECIDE && id != null && id.incarnation() != 0) {
      // Not stored as nothing here: the outage store's incarnations are not the store's, so the
      // decision is remembered (and written back) with its record, and its id names the record.
      r = r.withIdempotency(new Idempotency(id.key(), id.horizonMs(), id.tail(), id.replayable()));
    }
    PartitionResult result;
    try {
      result = o.local.applyNow(r);
    } catch (StoreException e) {
      out.completeExceptionally(e);
      return;
    }
    // A release that claims a record (a decision id's or a message id's) and found none here claims
    // one in the store: only the store can, so it is not journaled, and the caller, answered from the
    // outage store, learns that nothing was released (a release by decision id answers 503: retry it).
    boolean claimedNothing = r.operation() == Operation.RELEASE && r.idempotency() != null && !result.allowed();
    if (r.operation() == Operation.RELEASE && !claimedNothing
        || r.operation() == Operation.DECIDE && result.allowed()) {
      PartitionRequest step = r.operation() == Operation.DECIDE ? r.at(result.time()) : r;
      if (!o.journal.add(step)) {
        // the write-back has just finished: this step goes to the store itself
        writeBack(List.of(step));
      }
    }
    out.complete(result.asDegraded());
  }

  /**
   * Writes the outage's journal to the store, then goes up. New local decisions keep being
   * journaled while the first part is written; the journal is then sealed (a later step writes
   * itself through) and its rest written before the CAS to up. A step that fails stays in the
   * journal for the next probe.
   */
  private CompletableFuture<Void> recover(State seen) {
    Outage o = seen.outage;
    return writeBack(o.journal.take()).thenCompose(failed -> {
      if (!failed.isEmpty()) {
        o.journal.restore(failed);
        return CompletableFuture.completedFuture(null);
      }
      return writeBack(o.journal.seal()).thenAccept(rest -> {
        if (!rest.isEmpty()) {
          o.journal.unseal(rest);
          return;
        }
        if (state.compareAndSet(seen, State.UP)) {
          LOG.info("store recovered after {} ms; {} local admissions written back; decisions use the store again",
              clock.millis() - o.since, writtenBack.sum());
        }
      });
    });
  }

  /**
   * Merges steps decided by the outage store into the store, at their own times: each DECIDE is
   * replayed as a recording with every check in shadow mode (it records whatever the store holds, since
   * the message was already sent), each RELEASE as itself. Completes with the steps that failed.
   */
  private CompletableFuture<List<PartitionRequest>> writeBack(List<PartitionRequest> steps) {
    if (steps.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    List<PartitionRequest> sorted = new ArrayList<>(steps);
    sorted.sort(Comparator.comparingLong(FailoverStore::stepTime));
    Map<CounterSpec, CounterSpec> shadows = new IdentityHashMap<>();
    List<PartitionRequest> replay = new ArrayList<>(sorted.size());
    for (PartitionRequest s : sorted) {
      replay.add(s.operation() == Operation.DECIDE ? recording(s, shadows) : s);
    }
    List<CompletableFuture<PartitionResult>> out = new ArrayList<>(replay.size());
    for (int i = 0; i < replay.size(); i++) {
      out.add(new CompletableFuture<>());
    }
    for (int from = 0; from < replay.size(); from += policy.callSize()) {
      int to = Math.min(replay.size(), from + policy.callSize());
      settleWithin(callAll(replay.subList(from, to)), out.subList(from, to), (i, r) -> {});
    }
    return CompletableFuture.allOf(out.toArray(CompletableFuture[]::new)).handle((v, e) -> {
      List<PartitionRequest> failed = new ArrayList<>();
      for (int i = 0; i < out.size(); i++) {
        if (out.get(i).isCompletedExceptionally()) {
          failed.add(sorted.get(i));
        } else {
          writtenBack.increment();
        }
      }
      return failed;
    });
  }

  private static long stepTime(PartitionRequest s) {
    return s.operation() == Operation.RELEASE ? Long.MAX_VALUE : s.time();
  }

  /** A DECIDE as an unconditional recording: the same counters with every check in shadow mode. */
  static PartitionRequest recording(PartitionRequest step, Map<CounterSpec, CounterSpec> shadows) {
    List<CounterRequest> counters = new ArrayList<>(step.counters().size());
    for (CounterRequest c : step.counters()) {
      CounterSpec shadow = shadows.computeIfAbsent(c.spec(), FailoverStore::shadow);
      counters.add(new CounterRequest(c.key(), shadow, c.alignMs()));
    }
    // the message id goes with it: the shared store remembers it as the outage store did
    return new PartitionRequest(step.partition(), Operation.DECIDE, step.time(), step.cost(), counters, 0L,
        step.idempotency(), step.category());
  }

  private static CounterSpec shadow(CounterSpec spec) {
    long[] limits = new long[spec.checks()];
    long[] windows = new long[spec.checks()];
    for (int c = 0; c < limits.length; c++) {
      limits[c] = spec.limit(c);
      windows[c] = spec.windowMs(c);
    }
    return new CounterSpec(spec.algorithm(), limits, windows, new boolean[limits.length], spec.precision());
  }

  /** What the outage store admitted and released, in the order it did. */
  static final class Journal {
    private final int capacity;
    private List<PartitionRequest> steps = new ArrayList<>();
    private boolean sealed;

    Journal(int capacity) {
      this.capacity = capacity;
    }

    synchronized boolean add(PartitionRequest step) {
      if (sealed) {
        return false;
      }
      steps.add(step);
      return true;
    }

    synchronized boolean full() {
      return steps.size() >= capacity;
    }

    synchronized boolean isEmpty() {
      return steps.isEmpty();
    }

    synchronized int size() {
      return steps.size();
    }

    synchronized List<PartitionRequest> take() {
      List<PartitionRequest> taken = steps;
      steps = new ArrayList<>();
      return taken;
    }

    synchronized List<PartitionRequest> seal() {
      sealed = true;
      return take();
    }

    synchronized void restore(List<PartitionRequest> failed) {
      failed.addAll(steps);
      steps = new ArrayList<>(failed);
    }

    synchronized void unseal(List<PartitionRequest> failed) {
      sealed = false;
      restore(failed);
    }
  }
}
