package dev.fcap.engine;

import dev.fcap.model.Message;
import dev.fcap.model.Suppression;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;

/**
 * A message turned into store requests, with what its {@link dev.fcap.model.Decision} needs besides
 * the store's answers (built by {@link RequestBuilder}, read by {@link DecisionAssembly}).
 *
 * @param policy the tenant's policy at the decision; null for a tenant without one
 * @param requests one per partition; null while a one-partition message's request is in the thread's
 *     buffers ({@link RequestBuilder#prepare(CompiledPolicy, Message, Operation, long, Scratch, boolean)}),
 *     valid until the scratch is released
 * @param firstPartition the first partition's key (the decision id is sealed over it); null: no partition
 * @param recordKey the key of the release record in the first partition (null: none)
 * @param recordHorizonMs how long that record is kept
 * @param releasing whether admitted decisions get sealed, releasable ids (releases by decision id are on)
 * @param releasable whether this one's release record fits (a replay reads the stored one instead)
 * @param sealedTail the release record's tail when the decision id seals it (the record then holds only the claim)
 * @param time the caller-supplied time, or {@link PartitionRequest#STORE_TIME}
 * @param windows the send windows that apply, judged at the decision's time; null: none applies
 * @param suppressed the suppression-list entry that refuses the message (its step then only reads); null: none
 */
record Prepared(Message message, CompiledPolicy policy, CompiledPolicy.Plan plan, Operation op,
    PartitionRequest[] requests, byte[] firstPartition, byte[] recordKey, long recordHorizonMs, boolean releasing,
    boolean releasable, byte[] sealedTail, long time, WindowCheck windows, Suppression suppressed) {

  /** This message with {@code requests} (their first partition's key the same). */
  Prepared with(PartitionRequest[] requests) {
    return new Prepared(message, policy, plan, op, requests, requests[0].partition(), recordKey, recordHorizonMs,
        releasing, releasable, sealedTail, time, windows, suppressed);
  }

  /** Whether its decision waits for the engine's decision-id key to load (the engine's first ones). */
  boolean waitsForIds(DecisionIds ids) {
    return releasing && (recordKey != null || requests != null && requests.length == 0 && op == Operation.DECIDE)
        && !ids.ready();
  }
}
