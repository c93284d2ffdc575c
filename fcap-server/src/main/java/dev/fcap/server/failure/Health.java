package dev.fcap.server.failure;

import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import dev.fcap.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the store is up, failing or down: the failure streak, the probes that alone declare an
 * outage, and the outage itself, as one immutable {@link State} replaced by CAS.
 */
final class Health {
  private static final Logger LOG = LoggerFactory.getLogger(FailoverStore.class); // the decorator's log, one name
  static final byte[] PROBE_PARTITION = {'f', 'c', 'a', 'p', ':', 'p', 'r', 'o', 'b', 'e'};
  static final long NONE = Long.MIN_VALUE;

  private final Store delegate;
  private final FailurePolicy policy;
  private final Clock clock;
  private final Scheduler scheduler;
  /** Writes an outage's journal back and goes up; called by a probe the store answered during an outage. */
  private final Function<State, CompletableFuture<Void>> recover;
  /** Told when a failure streak or an outage ends: the store may have restarted meanwhile. */
  private final Runnable streakEnded;
  private final AtomicReference<State> state = new AtomicReference<>(State.UP);
  private final AtomicBoolean probing = new AtomicBoolean();
  private final LongAdder outages = new LongAdder();

  /** Since when the store has been failing (NONE: it is not), and the outage (null: up). */
  record State(long failingSince, Outage outage) {
    static final State UP = new State(NONE, null);
  }

  /**
   * One outage: since when, what the outage store admitted during it, and until when it lasts at
   * least because the store lost its data ({@code failure.storeReset: policy}; NONE: a store that
   * failed, up again once a probe passes).
   */
  record Outage(long since, OutageJournal journal, long resetUntil) {
    /** Whether the failure policy decides at {@code now} because the store lost its data. */
    boolean reset(long now) {
      return resetUntil != NONE && now < resetUntil;
    }
  }

  Health(Store delegate, FailurePolicy policy, Clock clock, Scheduler scheduler,
      Function<State, CompletableFuture<Void>> recover, Runnable streakEnded) {
    this.delegate = delegate;
    this.policy = policy;
    this.clock = clock;
    this.scheduler = scheduler;
    this.recover = recover;
    this.streakEnded = streakEnded;
  }

  /** The outage in force, or null while up. */
  Outage outage() {
    return state.get().outage;
  }

  long outages() {
    return outages.sum();
  }

  /**
   * The store lost its data: the failure policy decides until {@code until} (epoch ms), as in an
   * outage, whatever the probes find; an outage in force keeps its journal and lasts at least as long.
   */
  void decideByPolicyUntil(long until) {
    long now = clock.millis();
    while (true) {
      State s = state.get();
      Outage o = s.outage;
      Outage reset = o == null ? new Outage(now, new OutageJournal(policy.journalCapacity()), until)
          : new Outage(o.since, o.journal, Math.max(until, o.resetUntil));
      if (state.compareAndSet(s, new State(s.failingSince, reset))) {
        probe(policy.probeInterval().toMillis());
        return;
      }
    }
  }

  /** Goes up after the write-back, unless the state moved on since {@code seen}; true if it did. */
  boolean up(State seen) {
    if (state.compareAndSet(seen, State.UP)) {
      streakEnded.run();
      return true;
    }
    return false;
  }

  /** The store answered: a failure streak (not an outage) is over. */
  void succeeded() {
    State s = state.get();
    if (s.failingSince != NONE && s.outage == null && state.compareAndSet(s, State.UP)) {
      streakEnded.run();
    }
  }

  /** A call failed (timed out, unreachable): start a streak, and the probe that may end in an outage. */
  void failed() {
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
      Outage outage = new Outage(now, new OutageJournal(policy.journalCapacity()), NONE);
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
    settleQuietly(Deadlines.call(() -> delegate.read(PROBE_PARTITION)), read, policy.window().toMillis());
    read.whenComplete((r, error) -> {
      if (error == null && seen.outage != null && seen.outage.reset(clock.millis())) {
        nextProbe(); // the store answers, but it lost its data: the failure policy decides a while longer
        return;
      }
      if (error == null && seen.outage != null) {
        recover.apply(seen).whenComplete((v, e) -> nextProbe());
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
}
