package dev.fcap.engine;

import dev.fcap.model.Message;
import dev.fcap.model.Suppression;
import dev.fcap.store.Booking;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;

/**
 * A message turned into store requests, with what its {@link dev.fcap.model.Decision} needs besides
 * the store's answers (built by {@link RequestBuilder}, read by {@link DecisionAssembly}). A
 * one-partition message decided in the thread's buffers is prepared in the scratch's own instance
 * ({@link Scratch#prepared}), filled again by the thread's next decision: like the buffers, it is
 * read only until the scratch is released, and never kept; any other is an instance of its own.
 *
 * <ul>
 *   <li>{@code policy}: the tenant's policy at the decision; null for a tenant without one
 *   <li>{@code requests}: one per partition; null while a one-partition message's request is in the
 *       thread's buffers ({@link RequestBuilder#prepare(CompiledPolicy, Message, Operation, long, Scratch,
 *       boolean)}), valid until the scratch is released
 *   <li>{@code firstPartition}: the first partition's key (the decision id is sealed over it); null: no
 *       partition
 *   <li>{@code recordKey}: the key of the release record in the first partition (null: none)
 *   <li>{@code recordHorizonMs}: how long that record is kept
 *   <li>{@code releasing}: whether admitted decisions get sealed, releasable ids (releases by decision id
 *       are on)
 *   <li>{@code releasable}: whether this one's release record fits (a replay reads the stored one instead)
 *   <li>{@code sealedTail}: the release record's tail when the decision id seals it (the record then holds
 *       only the claim)
 *   <li>{@code time}: the caller-supplied time, or {@link PartitionRequest#STORE_TIME}
 *   <li>{@code windows}: the send windows that apply, judged at the decision's time; null: none applies
 *   <li>{@code suppressed}: the suppression-list entry that refuses the message (its step then only
 *       reads); null: none
 *   <li>{@code booking}: for a deferred message, what its step may book it at if it may not go now;
 *       null: not deferred
 * </ul>
 */
final class Prepared {
  private Message message;
  private CompiledPolicy policy;
  private CompiledPolicy.Plan plan;
  private Operation op;
  private PartitionRequest[] requests;
  private byte[] firstPartition;
  private byte[] recordKey;
  private long recordHorizonMs;
  private boolean releasing;
  private boolean releasable;
  private byte[] sealedTail;
  private long time;
  private WindowCheck windows;
  private Suppression suppressed;
  private Booking booking;

  /** An instance to fill ({@link #set}). */
  Prepared() {}

  /** This instance, holding the given parts. */
  Prepared set(Message message, CompiledPolicy policy, CompiledPolicy.Plan plan, Operation op,
      PartitionRequest[] requests, byte[] firstPartition, byte[] recordKey, long recordHorizonMs, boolean releasing,
      boolean releasable, byte[] sealedTail, long time, WindowCheck windows, Suppression suppressed) {
    this.message = message;
    this.policy = policy;
    this.plan = plan;
    this.op = op;
    this.requests = requests;
    this.firstPartition = firstPartition;
    this.recordKey = recordKey;
    this.recordHorizonMs = recordHorizonMs;
    this.releasing = releasing;
    this.releasable = releasable;
    this.sealedTail = sealedTail;
    this.time = time;
    this.windows = windows;
    this.suppressed = suppressed;
    this.booking = null;
    return this;
  }

  /** This instance, deferred as {@code booking} says. */
  Prepared booking(Booking booking) {
    this.booking = booking;
    return this;
  }

  Booking booking() {
    return booking;
  }

  Message message() {
    return message;
  }

  CompiledPolicy policy() {
    return policy;
  }

  CompiledPolicy.Plan plan() {
    return plan;
  }

  Operation op() {
    return op;
  }

  PartitionRequest[] requests() {
    return requests;
  }

  byte[] firstPartition() {
    return firstPartition;
  }

  byte[] recordKey() {
    return recordKey;
  }

  long recordHorizonMs() {
    return recordHorizonMs;
  }

  boolean releasing() {
    return releasing;
  }

  boolean releasable() {
    return releasable;
  }

  byte[] sealedTail() {
    return sealedTail;
  }

  long time() {
    return time;
  }

  WindowCheck windows() {
    return windows;
  }

  Suppression suppressed() {
    return suppressed;
  }

  /** Whether its decision waits for the engine's decision-id key to load (the engine's first ones). */
  boolean waitsForIds(DecisionIds ids) {
    return releasing && (recordKey != null || requests != null && requests.length == 0 && op == Operation.DECIDE)
        && !ids.ready();
  }
}
