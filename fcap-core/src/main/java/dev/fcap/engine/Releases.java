package dev.fcap.engine;

import dev.fcap.model.Message;
import dev.fcap.model.ReleaseResult;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.time.Clock;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * Undoes admitted decisions (the send failed), by decision id or by message id, from any node (see
 * the design note of {@link ReleaseRecord} and "Releases by decision id" in docs/algorithms.md).
 *
 * <p>A decision id seals where its release record lives ({@link DecisionIds}); the record was written
 * in the same atomic store step as the decision, beside the counters it undoes. A release reads the
 * record, then in one atomic store step claims it (only while it is there) and gives back what the
 * decision's messages still hold now, counted by the rules in force now: a retried release, or one
 * racing another node, gives back once. A decision of several partitions is claimed in its first
 * partition, then released in the others, each again claim-and-undo in one step; a crash in between
 * leaves the others counted (under-released, never over-admitted).
 */
final class Releases {
  private final Store store;
  private final PolicyRegistry policies;
  private final DecisionIds ids;
  private final CallerTime callerTime;
  private final Clock clock;
  private final RequestBuilder requests;

  Releases(Store store, PolicyRegistry policies, DecisionIds ids, CallerTime callerTime, Clock clock,
      RequestBuilder requests) {
    this.store = store;
    this.policies = policies;
    this.ids = ids;
    this.callerTime = callerTime;
    this.clock = clock;
    this.requests = requests;
  }

  /** See {@link Engine#releaseDecision}. */
  CompletableFuture<ReleaseResult> byDecisionId(String decisionId, Predicate<String> mayRelease) {
    if (!ids.ready()) {
      return ids.load().thenCompose(loaded -> openAndRelease(decisionId, mayRelease));
    }
    return openAndRelease(decisionId, mayRelease);
  }

  private CompletableFuture<ReleaseResult> openAndRelease(String decisionId, Predicate<String> mayRelease) {
    DecisionIds.Opened id = ids.open(decisionId);
    if (id == null || !mayRelease.test(id.tenant())) {
      return CompletableFuture.completedFuture(ReleaseResult.UNKNOWN);
    }
    if (id.partition()[0] == Keys.NOTHING_PARTITION) { // no rule applied: nothing to give back
      return CompletableFuture.completedFuture(callerTime.releaseTime(clock.millis()) >= id.expiresAtMs()
          ? ReleaseResult.EXPIRED : ReleaseResult.RELEASED);
    }
    if (id.tail() != null) { // the id seals the release: claim the record and give back in one step
      ReleaseRecord record = ReleaseRecord.decode(id.tail());
      if (record == null) {
        return CompletableFuture.completedFuture(ReleaseResult.UNKNOWN);
      }
      // the third form: the store kept nothing of the decision; its release claims and checks the incarnation
      Idempotency claim = id.incarnation() == 0 ? null : new Idempotency(id.recordKey(),
          Math.max(1, id.expiresAtMs() - id.decidedAt()), ReleaseRecord.IN_ID, false, id.incarnation());
      return store.apply(undo(id.tenant(), id.partition(), id.recordKey(), record, id.decidedAt(), claim)).thenApply(r -> {
        foundOrAvailable(r, r.allowed());
        // nothing claimed: released before (or the recipient was reset), or expired
        return r.allowed() || r.time() < id.expiresAtMs() ? ReleaseResult.RELEASED : ReleaseResult.EXPIRED;
      });
    }
    return store.apply(lookup(id.partition(), id.recordKey())).thenCompose(found -> {
      ReleaseRecord record = record(found);
      if (record == null) {
        // gone: claimed by an earlier release (or the recipient was reset), or expired
        return CompletableFuture.completedFuture(found.replayOf() != null ? ReleaseResult.UNKNOWN
            : found.time() >= id.expiresAtMs() ? ReleaseResult.EXPIRED : ReleaseResult.RELEASED);
      }
      return claim(id.tenant(), id.partition(), id.recordKey(), record, found.time())
          .thenApply(released -> ReleaseResult.RELEASED);
    });
  }

  /** See {@link Engine#releaseMessage}. */
  CompletableFuture<Boolean> byMessageId(Message message) {
    if (message.messageId() == null) {
      throw new IllegalArgumentException("releasing by message id needs a messageId");
    }
    Prepared p = requests.prepare(policies.get(message.tenant()), message, Operation.CHECK, PartitionRequest.STORE_TIME);
    PartitionRequest first = p.requests().length == 0 ? null : p.requests()[0];
    if (first == null) {
      return CompletableFuture.completedFuture(false);
    }
    if (p.requests().length == 1) {
      return store.apply(first.asRelease(0)).thenApply(r -> {
        foundOrAvailable(r, r.allowed());
        return r.allowed();
      });
    }
    byte[] key = first.idempotency().key();
    return store.apply(first).thenCompose(found -> {
      ReleaseRecord record = record(found);
      return record == null ? CompletableFuture.completedFuture(false)
          : claim(message.tenant(), first.partition(), key, record, found.time());
    });
  }

  /** A dry run of no counters that answers the release record under {@code key}, if the partition holds it. */
  private PartitionRequest lookup(byte[] partition, byte[] key) {
    return new PartitionRequest(partition, Operation.CHECK, callerTime.releaseTime(PartitionRequest.STORE_TIME), 1,
        List.of(), 0, new Idempotency(key, 1, ReleaseRecord.NOT_RELEASABLE, true), null);
  }

  /** The release record a lookup found; null if none (or not releasable). */
  private static ReleaseRecord record(PartitionResult found) {
    foundOrAvailable(found, found.replayOf() != null);
    return found.replayOf() == null ? null
        : ReleaseRecord.decode(found.replayOf().getBytes(StandardCharsets.ISO_8859_1));
  }

  /**
   * Fails a release step that found nothing to release ({@code found} false) when the failure policy
   * answered it, not the store: the outage store holds only the decisions it made (and writes them
   * back with their claims, in order), so what it found is the release, and what it did not find may
   * be in the store.
   */
  private static void foundOrAvailable(PartitionResult r, boolean found) {
    if (!found && r.degraded()) {
      throw new StoreException(StoreException.Reason.UNAVAILABLE, "the store is unavailable: release records are in it");
    }
  }

  /**
   * Claims the record under {@code key} and gives back its counts in one store step, then releases
   * the decision's other partitions the record lists; true iff this call claimed the first.
   */
  private CompletableFuture<Boolean> claim(String tenant, byte[] partition, byte[] key, ReleaseRecord record,
      long recordedAt) {
    return store.apply(undo(tenant, partition, key, record, recordedAt, null)).thenCompose(r -> {
      if (!r.allowed() || record.others().isEmpty()) {
        return CompletableFuture.completedFuture(r.allowed()); // not ours to finish: another release claimed it
      }
      List<CompletableFuture<?>> others = new ArrayList<>(record.others().size());
      for (int j = 1; j <= record.others().size(); j++) {
        byte[] other = record.others().get(j - 1);
        byte[] otherKey = ReleaseRecord.keyIn(record.othersKey() != null ? record.othersKey() : key, j);
        others.add(store.apply(lookup(other, otherKey)).thenCompose(found -> {
          ReleaseRecord o = record(found);
          return o == null ? CompletableFuture.completedFuture((PartitionResult) null)
              : store.apply(undo(tenant, other, otherKey, o, found.time(), null));
        }));
      }
      return CompletableFuture.allOf(others.toArray(CompletableFuture[]::new)).thenApply(ignored -> true);
    });
  }

  /**
   * The release of {@code record}'s counters with the specs they have in the tenant's policy now: a
   * rule edited since the decision keeps its counter (the group id, which starts the counter key,
   * never hashes a limit or a window) and must be counted by its rule as it is now, or the release
   * would prune and count by a rule that no longer holds (an old, smaller limit pruned a log that a
   * raised one still reads). Counters whose rule is gone are left alone (the record is still
   * claimed). The store undoes at the time it remembered; the release runs now: at the store's time,
   * or for a caller-time engine at the latest caller-supplied time it has seen (never before the
   * decision's), so that an algorithm gives back only what the message still holds then (a fixed
   * window's unit only while its window is the current one, a gcra cell only what has not drained).
   * {@code claim}: the release of a decision stored as nothing (the id's third form), else null.
   */
  private PartitionRequest undo(String tenant, byte[] partition, byte[] key, ReleaseRecord record, long recordedAt,
      Idempotency claim) {
    CompiledPolicy current = policies.get(tenant);
    List<CounterRequest> counters = new ArrayList<>(record.counters().size());
    if (current != null) {
      for (CounterRequest c : record.counters()) {
        CompiledPolicy.Group g = current.groupById(Keys.groupId(c.key()));
        if (g == null || g.spec.algorithm() != c.spec().algorithm()) {
          continue;
        }
        if (g.calendar == null) {
          counters.add(new CounterRequest(c.key(), g.spec, g.alignMs(recordedAt)));
        } else if (!g.recipientZone || record.zone() != null) {
          ZoneId zone = g.calendarZone(record.zone());
          counters.add(new CounterRequest(c.key(), g.periodSpec(recordedAt, zone), g.periodAlign(recordedAt, zone)));
        }
        // a recipient-zone period of a record that names no zone is not given back: a period judged in
        // another zone could take a unit of the next (never over-admit)
      }
    }
    // the latest caller time, not the event's: a booked message's lies ahead, and its partition must not
    // jump there (a store decides a partition at its latest write's time at the earliest anyway)
    long at = callerTime.releaseTime(PartitionRequest.STORE_TIME);
    return new PartitionRequest(partition, Operation.RELEASE, at, record.cost(), counters, recordedAt,
        claim != null ? claim : new Idempotency(key, 1, ReleaseRecord.NOT_RELEASABLE, true), null);
  }
}
