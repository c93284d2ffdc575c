package dev.fcap.server.failure;

import dev.fcap.server.failure.FailoverStore.Down;
import dev.fcap.server.failure.Health.Outage;
import dev.fcap.server.failure.Health.State;
import dev.fcap.store.Booking;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-process store that decides during an outage, and the write-back that merges what it
 * admitted and released into the store, at their own times, before decisions go back to the store.
 */
final class OutageStore {
  private static final Logger LOG = LoggerFactory.getLogger(FailoverStore.class); // the decorator's log, one name

  private final FailurePolicy policy;
  private final Clock clock;
  private final Deadlines deadlines;
  /**
   * Kept across outages: its counters expire by themselves, and a recipient whose outages flap
   * within one window is held to one limit per node, not one per outage.
   */
  private final MemoryStore local;
  private final LongAdder writtenBack = new LongAdder();

  OutageStore(FailurePolicy policy, Clock clock, Deadlines deadlines) {
    this.policy = policy;
    this.clock = clock;
    this.deadlines = deadlines;
    this.local = MemoryStore.builder().clock(clock).maxBytes(Math.max(1 << 20, Runtime.getRuntime().maxMemory() / 8))
        .build();
  }

  /** The outage store itself, for the hints and promises a caller passes on. */
  MemoryStore local() {
    return local;
  }

  long writtenBack() {
    return writtenBack.sum();
  }

  CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    return local.read(partition);
  }

  /** Decides {@code r} during outage {@code o}, or fails it as {@link Down} if its category is not decided here. */
  void decide(Outage o, PartitionRequest r, CompletableFuture<PartitionResult> out) {
    if (policy.actionFor(r.category()) != FailureAction.LOCAL) {
      long now = clock.millis();
      out.completeExceptionally(o.reset(now)
          ? new Down("the store lost its data; the failure policy decides until " + o.resetUntil() + " (failure.storeReset); "
              + "category '" + r.category() + "' is not decided locally", o.resetUntil())
          : new Down("the store is down; category '" + r.category() + "' is not decided locally"));
      return;
    }
    boolean records = r.operation() == Operation.DECIDE || r.operation() == Operation.RELEASE;
    if (records && o.journal().full()) {
      out.completeExceptionally(new StoreException(Reason.FULL, "the outage journal is full (failure.journal)"));
      return;
    }
    r = withOwnIncarnation(r);
    PartitionResult result;
    try {
      result = local.applyNow(r);
    } catch (StoreException e) {
      out.completeExceptionally(e);
      return;
    }
    // A release that claims a record (a decision id's or a message id's) and found none here claims
    // one in the store: only the store can, so it is not journaled, and the caller, answered from the
    // outage store, learns that nothing was released (a release by decision id answers 503: retry it).
    boolean claimedNothing = r.operation() == Operation.RELEASE && r.idempotency() != null && !result.allowed();
    if (r.operation() == Operation.RELEASE && !claimedNothing
        || r.operation() == Operation.DECIDE && (result.allowed() || result.bookedAt() != 0)) {
      PartitionRequest step = r.operation() != Operation.DECIDE ? r : r.at(result.time()).withBooking(
          result.bookedAt() == 0 ? null : bookedAt(result.bookedAt()));
      if (!o.journal().add(step)) {
        // the write-back has just finished: this step goes to the store itself
        writeBack(List.of(step));
      }
    }
    out.complete(result.asDegraded());
  }

  /**
   * What a booking made here is written back as: a booking at its instant, recorded there whatever the
   * store holds (the message will go then, as an admitted one went); written back after that instant,
   * at the store's time, as a late admission is.
   */
  private static Booking bookedAt(long at) {
    return new Booking(Long.MAX_VALUE, new long[] {at, Long.MAX_VALUE}, false);
  }

  /**
   * Not stored as nothing here: the outage store's incarnations are not the store's, so a decision
   * with a message id is remembered (and written back) with its record, and its id names the record.
   */
  private static PartitionRequest withOwnIncarnation(PartitionRequest r) {
    Idempotency id = r.idempotency();
    if (r.operation() == Operation.DECIDE && id != null && id.incarnation() != 0) {
      return r.withIdempotency(new Idempotency(id.key(), id.horizonMs(), id.tail(), id.replayable()));
    }
    return r;
  }

  /**
   * {@code r}'s new partition did not fit the full store ({@code full}): what {@code failure.full} says
   * for its category. {@code local} decides it on this store (degraded, counted and limited here);
   * {@code allow} records it here unconditionally (counted where it can be, so a later {@code local}
   * decision of the recipient sees it) and fails with {@code full}, which the decision service admits;
   * {@code deny} fails with {@code full}. Nothing is written back: the full store has no room for it.
   * If this store is full too, the request fails with {@code full}.
   */
  void decideWhenFull(PartitionRequest r, StoreException full, CompletableFuture<PartitionResult> out) {
    FailureAction action = policy.actionWhenFull(r.category());
    boolean decides = r.operation() == Operation.DECIDE || r.operation() == Operation.CHECK;
    if (action == FailureAction.DENY || !decides) {
      out.completeExceptionally(full);
      return;
    }
    try {
      if (action == FailureAction.LOCAL) {
        out.complete(local.applyNow(withOwnIncarnation(r)).asDegraded());
        return;
      }
      if (r.operation() == Operation.DECIDE) {
        local.applyNow(recording(withOwnIncarnation(r), new IdentityHashMap<>()));
      }
    } catch (StoreException e) {
      // this store is full too: the decision service applies the action alone
    }
    out.completeExceptionally(full);
  }

  /**
   * Writes the outage's journal to the store, then goes up. New local decisions keep being
   * journaled while the first part is written; the journal is then sealed (a later step writes
   * itself through) and its rest written before the CAS to up. A step that fails stays in the
   * journal for the next probe.
   */
  CompletableFuture<Void> recover(State seen, Health health) {
    Outage o = seen.outage();
    OutageJournal journal = o.journal();
    return writeBack(journal.take()).thenCompose(failed -> {
      if (!failed.isEmpty()) {
        journal.restore(failed);
        return CompletableFuture.completedFuture(null);
      }
      return writeBack(journal.seal()).thenAccept(rest -> {
        if (!rest.isEmpty()) {
          journal.unseal(rest);
          return;
        }
        if (health.up(seen)) {
          LOG.info("store {} after {} ms; {} local admissions written back; decisions use the store again",
              o.resetUntil() == Health.NONE ? "recovered" : "reset period over", clock.millis() - o.since(),
              writtenBack.sum());
        }
      });
    });
  }

  /**
   * Merges steps decided by the outage store into the store, at their own times: each DECIDE is
   * replayed as a recording with every check in shadow mode (it records whatever the store holds, since
   * the message was already sent, or booked at its instant if it was booked), each RELEASE as itself.
   * Completes with the steps that failed.
   */
  private CompletableFuture<List<PartitionRequest>> writeBack(List<PartitionRequest> steps) {
    if (steps.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    List<PartitionRequest> sorted = new ArrayList<>(steps);
    sorted.sort(Comparator.comparingLong(OutageStore::stepTime));
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
      deadlines.settleWithin(deadlines.callAll(replay.subList(from, to)), out.subList(from, to), (i, r) -> {});
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
      CounterSpec shadow = shadows.computeIfAbsent(c.spec(), CounterSpec::unenforced);
      counters.add(new CounterRequest(c.key(), shadow, c.alignMs()));
    }
    // the message id goes with it: the shared store remembers it as the outage store did
    return new PartitionRequest(step.partition(), Operation.DECIDE, step.time(), step.cost(), counters, 0L,
        step.idempotency(), step.category(), null, step.booking());
  }
}
