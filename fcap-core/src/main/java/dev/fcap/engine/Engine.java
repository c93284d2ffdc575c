package dev.fcap.engine;

import dev.fcap.algorithm.PartitionStep;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.ReleaseResult;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcome;
import dev.fcap.store.Clock;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionAnswer;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.ReusableRequest;
import dev.fcap.store.ReusableResult;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoredCounter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Decides messages against the policies of their tenants, on a {@link Store}.
 *
 * <p><b>How a decision flows.</b> The tenant's {@link CompiledPolicy} picks the rules that apply and
 * a cached plan says which partitions and counters they touch. Counters keyed by the recipient all
 * live in the recipient's partition, so the common policy is one atomic {@link Store#apply} call.
 * Rules keyed without the recipient (per sender, per channel) live in shared partitions; those are
 * decided one after another, recipient first, and if a later partition refuses, what the earlier
 * ones recorded is released. Under contention that can briefly refuse too much; it never admits too
 * much. A denial is answered by dry-running the partitions not reached, so every rule reports.
 *
 * <p>The engine knows no storage and the store knows no rules. Policies are swapped atomically with
 * {@link #setPolicies}; counters survive edits of limits and windows (see {@link CompiledPolicy}).
 */
public final class Engine implements AutoCloseable {
  /**
   * The answers of {@link #decideAt(Message, long, RuleVerdicts)} when no rule applies or the store
   * answered on the calling thread: shared, already complete (completing them again changes nothing).
   */
  private static final CompletableFuture<Boolean> ADMITTED = CompletableFuture.completedFuture(true);
  private static final CompletableFuture<Boolean> REFUSED = CompletableFuture.completedFuture(false);
  private final Store store;
  /**
   * {@link Store#answersOnCallingThread}, asked once: a one-partition decision is then built in the
   * thread's buffers for {@code applyInto}; else in arrays of its own, at once (not built twice).
   */
  private final boolean storeAnswersHere;
  private final Clock clock;
  private final boolean callerTime;
  /** How long admitted decisions stay releasable by decision id: -1 the policy's longest window, 0 never. */
  private final long releaseHorizonMs;
  private final DecisionIds ids;
  /** The latest caller-supplied time seen: a caller-time engine's "now" for a release (see {@link #release}). */
  private final java.util.concurrent.atomic.AtomicLong latestCallerTime = new java.util.concurrent.atomic.AtomicLong(Long.MIN_VALUE);
  private volatile Map<String, CompiledPolicy> policies = Map.of();

  private Engine(Builder b) {
    this.store = b.store;
    this.storeAnswersHere = store.answersOnCallingThread();
    this.clock = b.clock;
    this.callerTime = b.callerTime;
    this.releaseHorizonMs = b.releaseHorizonMs;
    this.ids = new DecisionIds(store);
    if (releaseHorizonMs != 0) {
      ids.load(); // at once, so decisions do not wait for it; a failed load is tried again by the next one
    }
    setPolicies(b.policies);
  }

  public static Builder builder(Store store) {
    return new Builder(store);
  }

  /** Replaces every policy at once; tenants not listed lose their rules. */
  public synchronized void setPolicies(List<Policy> newPolicies) {
    Map<String, CompiledPolicy> compiled = new HashMap<>();
    for (Policy p : newPolicies) {
      compiled.put(p.tenant(), new CompiledPolicy(p));
    }
    policies = Map.copyOf(compiled);
  }

  /** Replaces the policy of one tenant; the next decision of that tenant uses it. */
  public synchronized void setPolicy(Policy policy) {
    Map<String, CompiledPolicy> next = new HashMap<>(policies);
    next.put(policy.tenant(), new CompiledPolicy(policy));
    policies = Map.copyOf(next);
  }

  public Optional<Policy> policy(String tenant) {
    CompiledPolicy cp = policies.get(tenant);
    return cp == null ? Optional.empty() : Optional.of(cp.policy);
  }

  public List<Policy> policies() {
    return policies.values().stream().map(cp -> cp.policy).sorted(Comparator.comparing(Policy::tenant)).toList();
  }

  /** Decides and, if admitted, records the message. */
  public CompletableFuture<Decision> decide(Message message) {
    return run(message, Operation.DECIDE, PartitionRequest.STORE_TIME);
  }

  /** Decides without recording anything (dry run). */
  public CompletableFuture<Decision> check(Message message) {
    return run(message, Operation.CHECK, PartitionRequest.STORE_TIME);
  }

  /** {@link #decide} at a caller-supplied time (replays, tests); only if the builder allowed it. */
  public CompletableFuture<Decision> decideAt(Message message, long epochMillis) {
    return run(message, Operation.DECIDE, callerTime(epochMillis));
  }

  /**
   * {@link #decideAt(Message, long)} for a caller that keeps its own tallies instead of a
   * {@link Decision} per message (a replay of millions of rows): each rule that applied reports to
   * {@code verdicts}, in policy order, on the thread that completes the decision (the caller's, on a
   * store that answers at once), and nothing else of the decision is built: no outcomes, no lists, no
   * id. Its decisions have no id, so it is refused on an engine whose admitted decisions are
   * releasable by id (build it with {@code releaseHorizon(Duration.ZERO)}); a message id is
   * remembered as usual.
   *
   * @return completes with whether the message was admitted (and recorded)
   */
  public CompletableFuture<Boolean> decideAt(Message message, long epochMillis, RuleVerdicts verdicts) {
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(verdicts, "verdicts");
    if (releaseHorizonMs != 0) {
      throw new IllegalStateException("decisions reported as verdicts have no id: build the engine with "
          + "releaseHorizon(Duration.ZERO)");
    }
    long time = callerTime(epochMillis);
    CompiledPolicy cp = policies.get(message.tenant());
    CompiledPolicy.Plan plan = cp == null ? null : cp.plan(message);
    if (plan == null || plan.partitions.length == 0) {
      return ADMITTED; // no rule applies
    }
    // the requests alone, no Prepared: what a Decision needs besides them (an id) this has none of
    int partitions = plan.partitions.length;
    byte[] key = recordKey(message, Operation.DECIDE, partitions, 0); // a message id's, or none
    long horizon = key == null ? 0 : recordHorizon(cp, message, 0);
    Scratch scratch = Scratch.take();
    PartitionRequest[] requests;
    try {
      ReusableRequest[] built = scratch.requests(partitions);
      if (partitions == 1 && storeAnswersHere) {
        fill(message, cp, plan, Operation.DECIDE, time, key, horizon, built, 1, scratch);
        if (store.applyInto(built[0], scratch.result)) {
          // the embedded store answers on this thread, into this thread's answer, from this thread's
          // request and keys: nothing allocated for either
          return report(cp, plan, scratch.answers, verdicts) ? ADMITTED : REFUSED;
        }
      }
      // over several partitions, or on a store that cannot answer here (or did not): requests it may keep
      fill(message, cp, plan, Operation.DECIDE, time, key, horizon, built, partitions, null);
      requests = toRequests(built, partitions);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(new java.util.concurrent.CompletionException(e)); // as apply's future
    } finally {
      scratch.release();
    }
    return chain(requests, Operation.DECIDE, 0, new PartitionResult[partitions])
        .thenApply(results -> report(cp, plan, results, verdicts));
  }

  /**
   * A hint before this thread decides {@code messages[from, to)}, one after the other (a batch of
   * the replay): their recipients' partitions are handed to the store together
   * ({@link Store#prefetch}), so that a store in memory reads them at once instead of each decision
   * waiting for its own reads. Changes nothing: a message of an unknown tenant, or to which no rule
   * keyed by the recipient applies, is skipped.
   */
  public void prefetch(Message[] messages, int from, int to) {
    Scratch scratch = Scratch.take();
    try {
      byte[][] keys = scratch.ahead(to - from);
      for (int i = from; i < to; i++) {
        Message m = messages[i];
        CompiledPolicy cp = policies.get(m.tenant());
        keys[i - from] = cp != null && cp.plan(m).keyedByRecipient()
            ? Keys.recipientPartition(cp.tenantUtf8, m.recipient(), scratch.aheadKey(i - from)) : null;
      }
      store.prefetch(keys, to - from);
    } finally {
      scratch.release();
    }
  }

  /**
   * What one thread's decisions reuse, one after the other: the requests they are built in, and on a
   * store that answers on the calling thread ({@link Store#applyInto}) the answer it writes into and
   * the buffers a one-partition request's keys are written in (a recipient's partition key per key
   * length, a content counter key per counter). A decision made inside another's
   * {@link RuleVerdicts} callback (on the same thread, while the outer one still reads its answer)
   * takes one of its own.
   */
  private static final class Scratch {
    private static final ThreadLocal<Scratch> OF_THREAD = ThreadLocal.withInitial(Scratch::new);
    /** The longest partition key with a buffer of its own; a longer one is an array of its own. */
    private static final int BUFFERED_KEY_LENGTH = 256;
    final ReusableResult result = new ReusableResult();
    final PartitionAnswer[] answers = {result};
    private ReusableRequest[] requests = {new ReusableRequest()};
    private int used;
    /** By length; made on first use (a scratch taken inside a callback may never write a key). */
    private byte[][] partitionKeys;
    private byte[][] counterKeys = new byte[4][];
    /** {@link #partitionKey(int)} as the function {@link Keys#recipientPartition} asks for its array. */
    final java.util.function.IntFunction<byte[]> partitionKey = this::partitionKey;
    /** The keys of one {@link Engine#prefetch}, one slot per message. */
    private byte[][] ahead = new byte[0][];
    /** Per slot, its key buffers by length (made on first use), as {@link #partitionKeys} for a decision. */
    private byte[][][] aheadBuffers = new byte[0][][];
    private int aheadSlot;
    private final java.util.function.IntFunction<byte[]> aheadKey = this::aheadKeyOfLength;
    private boolean busy;

    static Scratch take() {
      Scratch s = OF_THREAD.get();
      if (s.busy) {
        s = new Scratch();
      }
      s.busy = true;
      return s;
    }

    /** At least {@code n} requests to fill, reused until {@link #release}. */
    ReusableRequest[] requests(int n) {
      if (n > requests.length) {
        int had = requests.length;
        requests = java.util.Arrays.copyOf(requests, Math.max(n, 2 * had));
        for (int i = had; i < requests.length; i++) {
          requests[i] = new ReusableRequest();
        }
      }
      used = Math.max(used, n);
      return requests;
    }

    /** The buffer of partition keys {@code length} bytes long. */
    byte[] partitionKey(int length) {
      if (length > BUFFERED_KEY_LENGTH) {
        return new byte[length];
      }
      if (partitionKeys == null) {
        partitionKeys = new byte[BUFFERED_KEY_LENGTH + 1][];
      }
      return ofLength(partitionKeys, length);
    }

    /** The array of {@code length} bytes in {@code byLength} (a table by length), made on first use. */
    private static byte[] ofLength(byte[][] byLength, int length) {
      byte[] key = byLength[length];
      return key != null ? key : (byLength[length] = new byte[length]);
    }

    /** The partition keys {@link Engine#prefetch} hands the store, at least {@code n} slots. */
    byte[][] ahead(int n) {
      if (ahead.length < n) {
        ahead = java.util.Arrays.copyOf(ahead, n);
        aheadBuffers = java.util.Arrays.copyOf(aheadBuffers, n);
      }
      return ahead;
    }

    /** The function {@link Keys#recipientPartition} asks for slot {@code slot}'s array: one per slot and length. */
    java.util.function.IntFunction<byte[]> aheadKey(int slot) {
      aheadSlot = slot;
      return aheadKey;
    }

    private byte[] aheadKeyOfLength(int length) {
      if (length > BUFFERED_KEY_LENGTH) {
        return new byte[length];
      }
      byte[][] buffers = aheadBuffers[aheadSlot];
      if (buffers == null) {
        buffers = aheadBuffers[aheadSlot] = new byte[BUFFERED_KEY_LENGTH + 1][];
      }
      return ofLength(buffers, length);
    }

    /** The buffer of counter {@code counter}'s key, {@code length} bytes long. */
    byte[] counterKey(int counter, int length) {
      if (counter >= counterKeys.length) {
        counterKeys = java.util.Arrays.copyOf(counterKeys, Math.max(counter + 1, 2 * counterKeys.length));
      }
      byte[] key = counterKeys[counter];
      return key != null && key.length == length ? key : (counterKeys[counter] = new byte[length]);
    }

    void release() {
      for (int i = 0; i < used; i++) {
        requests[i].clear(); // keep no request alive between decisions
      }
      used = 0;
      busy = false;
    }
  }

  /** Reports each rule's verdict of a decision to {@code verdicts}; whether the message was admitted. */
  private static boolean report(CompiledPolicy policy, CompiledPolicy.Plan plan, PartitionAnswer[] results,
      RuleVerdicts verdicts) {
    boolean allowed = true;
    for (int i = 0; i < plan.rules.length; i++) {
      PartitionAnswer r = results[plan.rulePartition[i]];
      if (r != null) { // null: a replayed decision reports the rules of the partition that remembered it
        boolean admits = r.admits(plan.ruleOffset[i]);
        verdicts.rule(plan.rules[i], admits);
        allowed &= admits || !policy.rule(plan.rules[i]).enforced();
      }
    }
    return allowed;
  }

  /**
   * Receives the verdict of each rule that applied to a message, for
   * {@link #decideAt(Message, long, RuleVerdicts)}; the caller owns it and may reuse it for the
   * decisions it waits for one after the other.
   */
  @FunctionalInterface
  public interface RuleVerdicts {
    /**
     * Rule {@code index} (its place in the tenant's policy, the one in force at the decision)
     * admitted the message, or refused it.
     */
    void rule(int index, boolean allowed);
  }

  /** {@link #check} at a caller-supplied time; only if the builder allowed it. */
  public CompletableFuture<Decision> checkAt(Message message, long epochMillis) {
    return run(message, Operation.CHECK, callerTime(epochMillis));
  }

  private long callerTime(long epochMillis) {
    if (!callerTime) {
      throw new IllegalStateException("caller-supplied time is not enabled for this engine");
    }
    if (epochMillis == PartitionRequest.STORE_TIME) {
      throw new IllegalArgumentException("time out of range");
    }
    if (epochMillis > latestCallerTime.get()) { // a write only when it moves: replay's deciders share it
      latestCallerTime.accumulateAndGet(epochMillis, Math::max);
    }
    return epochMillis;
  }

  /**
   * Decides many messages (dry run if {@code dryRun}); one future per message, in order. Each decision
   * is atomic on its own and completes (or fails) on its own; single-partition decisions go to the
   * store in one {@link Store#applyAll} call.
   */
  public List<CompletableFuture<Decision>> decideAll(List<Message> messages, boolean dryRun) {
    Operation op = dryRun ? Operation.CHECK : Operation.DECIDE;
    List<CompletableFuture<Decision>> out = new ArrayList<>(messages.size());
    if (!dryRun && releaseHorizonMs != 0 && !ids.ready()) {
      for (Message m : messages) {
        out.add(run(m, op, PartitionRequest.STORE_TIME)); // each waits for the decision-id key first
      }
      return out;
    }
    List<Prepared> single = new ArrayList<>();
    List<PartitionRequest> singleRequests = new ArrayList<>();
    List<CompletableFuture<Decision>> singleSlots = new ArrayList<>();
    for (Message m : messages) {
      Prepared p = prepare(m, op, PartitionRequest.STORE_TIME);
      if (p.requests.length == 1) {
        CompletableFuture<Decision> slot = new CompletableFuture<>();
        single.add(p);
        singleRequests.add(p.requests[0]);
        singleSlots.add(slot);
        out.add(slot);
      } else {
        out.add(execute(p));
      }
    }
    if (!singleRequests.isEmpty()) {
      // one future per request: a request the store refuses (full) or fails fails its decision only
      List<CompletableFuture<PartitionResult>> results = store.applyAll(singleRequests);
      for (int i = 0; i < single.size(); i++) {
        Prepared p = single.get(i);
        CompletableFuture<Decision> slot = singleSlots.get(i);
        results.get(i).whenComplete((r, error) -> {
          if (error != null) {
            slot.completeExceptionally(error);
          } else {
            try {
              slot.complete(finish(p, new PartitionResult[] {r}));
            } catch (RuntimeException e) {
              slot.completeExceptionally(e);
            }
          }
        });
      }
    }
    return out;
  }

  /**
   * Undoes an admitted decision (the send failed); true iff released (see {@link #releaseDecision}).
   */
  public CompletableFuture<Boolean> release(String decisionId) {
    return release(decisionId, tenant -> true);
  }

  /** {@link #releaseDecision}, answered as whether the decision is released. */
  public CompletableFuture<Boolean> release(String decisionId, java.util.function.Predicate<String> mayRelease) {
    return releaseDecision(decisionId, mayRelease).thenApply(ReleaseResult::released);
  }

  /**
   * Undoes an admitted decision (the send failed), from any node, for as long as the release horizon
   * (see the design note of {@link ReleaseRecord} and "Releases by decision id" in docs/algorithms.md).
   * The decision id seals where its release record lives ({@link DecisionIds}); the record was
   * written in the same atomic store step as the decision, beside the counters it undoes. A release
   * reads the record, then in one atomic store step claims it (only while it is there) and gives back
   * what the decision's messages still hold now, counted by the rules in force now
   * (docs/algorithms.md, "Releases"): a retried release, or one racing another node, gives back once.
   * A decision of several partitions (rules keyed without the recipient) is claimed in its first
   * partition, then released in the others, each again claim-and-undo in one step; a crash in
   * between leaves the others counted (under-released, never over-admitted).
   *
   * <p>Answers released also when the decision was released before (idempotent; also by message
   * id, or when its recipient was reset); {@code expired} once the horizon has passed;
   * {@code unknown} for any id this deployment did not issue for an admitted decision of a tenant
   * {@code mayRelease} accepts (a caller's key may release only its own tenants' decisions). Fails
   * with the store's error when the store cannot answer: never a silent false.
   */
  public CompletableFuture<ReleaseResult> releaseDecision(String decisionId,
      java.util.function.Predicate<String> mayRelease) {
    if (!ids.ready()) {
      return ids.load().thenCompose(loaded -> openAndRelease(decisionId, mayRelease));
    }
    return openAndRelease(decisionId, mayRelease);
  }

  private CompletableFuture<ReleaseResult> openAndRelease(String decisionId,
      java.util.function.Predicate<String> mayRelease) {
    DecisionIds.Opened id = ids.open(decisionId);
    if (id == null || !mayRelease.test(id.tenant())) {
      return CompletableFuture.completedFuture(ReleaseResult.UNKNOWN);
    }
    if (id.partition()[0] == Keys.NOTHING_PARTITION) { // no rule applied: nothing to give back
      return CompletableFuture.completedFuture(releaseTime(clock.millis()) >= id.expiresAtMs()
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

  /** A dry run of no counters that answers the release record under {@code key}, if the partition holds it. */
  private PartitionRequest lookup(byte[] partition, byte[] key) {
    return new PartitionRequest(partition, Operation.CHECK, releaseTime(PartitionRequest.STORE_TIME), 1, List.of(),
        0, new Idempotency(key, 1, ReleaseRecord.NOT_RELEASABLE, true), null);
  }

  /** The release record a lookup found; null if none (or not releasable). */
  private static ReleaseRecord record(PartitionResult found) {
    foundOrAvailable(found, found.replayOf() != null);
    return found.replayOf() == null ? null
        : ReleaseRecord.decode(found.replayOf().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
  }

  /**
   * Fails a release step that found nothing to release ({@code found} false) when the failure policy
   * answered it, not the store: the outage store holds only the decisions it made (and writes them
   * back with their claims, in order), so what it found is the release, and what it did not find may
   * be in the store.
   */
  private static void foundOrAvailable(PartitionResult r, boolean found) {
    if (!found && r.degraded()) {
      throw new dev.fcap.store.StoreException(dev.fcap.store.StoreException.Reason.UNAVAILABLE,
          "the store is unavailable: release records are in it");
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
        byte[] otherKey = ReleaseRecord.keyIn(key, j);
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
        if (g != null && g.spec.algorithm() == c.spec().algorithm()) {
          counters.add(new CounterRequest(c.key(), g.spec, g.alignMs(recordedAt)));
        }
      }
    }
    long at = releaseTime(PartitionRequest.STORE_TIME);
    return new PartitionRequest(partition, Operation.RELEASE,
        at == PartitionRequest.STORE_TIME ? at : Math.max(at, recordedAt), record.cost(), counters, recordedAt,
        claim != null ? claim : new Idempotency(key, 1, ReleaseRecord.NOT_RELEASABLE, true), null);
  }

  /** {@code storeTime} for an engine deciding at the store's time, else the latest caller time seen. */
  private long releaseTime(long storeTime) {
    long latest = latestCallerTime.get();
    return callerTime && latest != Long.MIN_VALUE ? latest : storeTime;
  }

  /**
   * Undoes the admitted decision of a message id (the send failed), like {@link #release} by its
   * decision id. {@code message} names the same tenant, recipient and {@code messageId} as the
   * decision (and, for rules keyed without the recipient, the same dimensions). When the policy keeps
   * the message's counters in one partition (every rule keyed by the recipient: the common case),
   * this is one atomic store step that any node can take, for as long as the id is remembered (the
   * policy's longest window), also after a restart of a durable store; otherwise the release record
   * the id is remembered with is claimed like a release by decision id. True iff something was
   * released now: false when the id was never admitted, was already released, or is no longer
   * remembered.
   *
   * @throws IllegalArgumentException if the message has no message id
   */
  public CompletableFuture<Boolean> releaseMessage(Message message) {
    if (message.messageId() == null) {
      throw new IllegalArgumentException("releasing by message id needs a messageId");
    }
    Prepared p = prepare(message, Operation.CHECK, PartitionRequest.STORE_TIME);
    if (p.requests.length == 0) {
      return CompletableFuture.completedFuture(false);
    }
    if (p.requests.length == 1) {
      return store.apply(p.requests[0].asRelease(0)).thenApply(r -> {
        foundOrAvailable(r, r.allowed());
        return r.allowed();
      });
    }
    byte[] key = p.requests[0].idempotency().key();
    return store.apply(p.requests[0]).thenCompose(found -> {
      ReleaseRecord record = record(found);
      return record == null ? CompletableFuture.completedFuture(false)
          : claim(message.tenant(), p.requests[0].partition(), key, record, found.time());
    });
  }

  /** A recipient's live counters, per rule and per content fingerprint. */
  public CompletableFuture<Inspection> inspect(String tenant, String recipient) {
    CompiledPolicy cp = policies.get(tenant);
    byte[] partition = Keys.recipientPartition(tenant, recipient);
    return store.read(partition).thenCompose(snapshot -> {
      // the dry runs of large logs may answer on the store's threads while this one adds the others
      List<CounterView> views = java.util.Collections.synchronizedList(new ArrayList<>());
      List<CompletableFuture<Void>> large = new ArrayList<>();
      if (cp != null) {
        for (StoredCounter sc : snapshot.counters()) {
          CompiledPolicy.Group g = groupOf(cp, sc);
          if (g == null) {
            continue; // a counter of a rule that is no longer in the policy
          }
          CounterRequest c = new CounterRequest(sc.key(), g.spec, g.alignMs(snapshot.time()));
          if (sc.state() != null) {
            long[] used = new long[g.spec.checks()];
            long[] retryAt = new long[g.spec.checks()];
            PartitionStep.inspect(sc.state(), c, snapshot.time(), used, retryAt, 0);
            addViews(cp, g, sc.key(), used, retryAt, snapshot.time(), views);
          } else {
            // a large log is not read whole: a dry run of that counter evaluates it in O(log n)
            large.add(store.apply(PartitionRequest.of(partition, Operation.CHECK, PartitionRequest.STORE_TIME, 1,
                List.of(c))).thenAccept(r -> addViews(cp, g, sc.key(), r.used(), r.retryAt(), r.time(), views)));
          }
        }
      }
      return CompletableFuture.allOf(large.toArray(new CompletableFuture<?>[0]))
          .thenApply(done -> inspection(tenant, recipient, cp, snapshot.time(), views));
    });
  }

  private static Inspection inspection(String tenant, String recipient, CompiledPolicy cp, long time,
      List<CounterView> views) {
    Map<String, Integer> order = new HashMap<>();
    if (cp != null) {
      for (int i = 0; i < cp.rules.length; i++) {
        order.put(cp.rules[i].id(), i);
      }
    }
    List<CounterView> sorted = new ArrayList<>(views);
    sorted.sort(Comparator.comparing((CounterView v) -> order.getOrDefault(v.ruleId(), Integer.MAX_VALUE))
        .thenComparing(v -> v.values().toString()));
    return new Inspection(tenant, recipient, time, cp == null ? 0 : cp.policy.version(), sorted);
  }

  /** The group in force that a stored counter belongs to; null if its rule is no longer in the policy. */
  private static CompiledPolicy.Group groupOf(CompiledPolicy cp, StoredCounter sc) {
    if (sc.key().length < 8) {
      return null;
    }
    CompiledPolicy.Group g = cp.groupById(Keys.groupId(sc.key()));
    return g == null || g.spec.algorithm() != sc.algorithm() || !g.recipientKeyed ? null : g;
  }

  private static void addViews(CompiledPolicy cp, CompiledPolicy.Group g, byte[] key, long[] used, long[] retryAt,
      long time, List<CounterView> views) {
    Map<String, String> values = Keys.counterValues(key, g.key);
    for (int c = 0; c < g.rules.length; c++) {
      Rule r = cp.rule(g.rules[c]);
      long frees = retryAt[c] == PartitionResult.NEVER ? -1 : retryAt[c] - time;
      views.add(new CounterView(r.id(), r.limit(), r.windowMs(), r.enforced(), values, used[c],
          Math.max(0, r.limit() - used[c]), frees));
    }
  }

  /**
   * Forgets a recipient (erasure requests): every counter in its partition, and with them the release
   * records kept there: a release of an earlier decision then finds no record and gives nothing back
   * (what it counted is gone, and it must not take units from what was counted after the reset).
   */
  public CompletableFuture<Boolean> reset(String tenant, String recipient) {
    byte[] partition = Keys.recipientPartition(tenant, recipient);
    return store.delete(partition);
  }

  @Override
  public void close() {
    store.close();
  }

  // ---------------------------------------------------------------------------------------------

  /** A message turned into store requests. */
  private static final class Prepared {
    final Message message;
    final CompiledPolicy policy;
    final CompiledPolicy.Plan plan;
    final Operation op;
    /**
     * One per partition; null while a one-partition message's request is in the thread's buffers
     * ({@link #prepare(Message, Operation, long, Scratch, boolean)}), valid until the scratch is released.
     */
    final PartitionRequest[] requests;
    /** The first partition's key (the decision id is sealed over it); null: no partition. */
    final byte[] firstPartition;
    /** The key of the release record in the first partition (null: none), and how long it is kept. */
    final byte[] recordKey;
    final long recordHorizonMs;
    /**
     * Whether admitted decisions get sealed, releasable ids (releases by decision id are on), and
     * whether this one's release record fits (a replay reads the stored one instead).
     */
    final boolean releasing;
    final boolean releasable;
    /** The release record's tail when the decision id seals it (the record then holds only the claim). */
    final byte[] sealedTail;
    /** The caller-supplied time, or STORE_TIME. */
    final long time;

    /** This message with {@code requests} (their first partition's key the same). */
    Prepared with(PartitionRequest[] requests) {
      return new Prepared(message, policy, plan, op, requests, requests[0].partition(), recordKey, recordHorizonMs,
          releasing, releasable, sealedTail, time);
    }

    /** Whether its decision waits for the engine's decision-id key to load (the engine's first ones). */
    boolean waitsForIds(DecisionIds ids) {
      return releasing && (recordKey != null || requests != null && requests.length == 0 && op == Operation.DECIDE)
          && !ids.ready();
    }

    Prepared(Message message, CompiledPolicy policy, CompiledPolicy.Plan plan, Operation op, PartitionRequest[] requests,
        byte[] firstPartition, byte[] recordKey, long recordHorizonMs, boolean releasing, boolean releasable,
        byte[] sealedTail, long time) {
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
    }
  }

  private CompletableFuture<Decision> run(Message message, Operation op, long time) {
    Objects.requireNonNull(message, "message");
    Scratch scratch = Scratch.take();
    Prepared p;
    try {
      p = prepare(message, op, time, scratch, storeAnswersHere);
      if (p.requests == null) {
        if (!p.waitsForIds(ids)) {
          try {
            if (store.applyInto(scratch.requests(1)[0], scratch.result)) {
              // the embedded store answers on this thread, from this thread's request and keys, into
              // its answer: the Decision is all this allocates
              return CompletableFuture.completedFuture(finish(p, scratch.answers));
            }
          } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new java.util.concurrent.CompletionException(e)); // as apply's
          }
        }
        // a store that may keep the request, or a decision that waits: a request of its own
        ReusableRequest[] built = scratch.requests(1);
        fill(message, p.policy, p.plan, op, time, p.recordKey, p.recordHorizonMs, built, 1, null);
        p = p.with(toRequests(built, 1));
      }
    } finally {
      scratch.release();
    }
    return execute(p);
  }

  /** {@code m} as store requests of their own, which a store may keep. */
  private Prepared prepare(Message m, Operation op, long time) {
    Scratch scratch = Scratch.take();
    try {
      return prepare(m, op, time, scratch, false);
    } finally {
      scratch.release();
    }
  }

  /**
   * {@code m} as store requests, filled in {@code scratch}'s; with {@code buffered}, a one-partition
   * message's request is left there, its keys in the scratch's buffers (the {@code Prepared}'s
   * requests null: valid until the scratch is released).
   */
  private Prepared prepare(Message m, Operation op, long time, Scratch scratch, boolean buffered) {
    CompiledPolicy cp = policies.get(m.tenant());
    if (cp == null) {
      return new Prepared(m, null, null, op, new PartitionRequest[0], null, null, 0, releaseHorizonMs != 0, true, null,
          time);
    }
    CompiledPolicy.Plan plan = cp.plan(m);
    long releaseHorizon = releaseHorizonMs < 0 ? cp.messageHorizonMs : releaseHorizonMs;
    int partitions = plan.partitions.length;
    byte[] key = recordKey(m, op, partitions, releaseHorizon);
    long horizon = key == null ? 0 : recordHorizon(cp, m, releaseHorizon);
    boolean inBuffers = buffered && partitions == 1;
    ReusableRequest[] built = scratch.requests(partitions);
    byte[] sealedTail = fill(m, cp, plan, op, time, key, horizon, built, partitions, inBuffers ? scratch : null);
    // the first partition's record is releasable unless its tail did not fit (sealed or not, the
    // request's tail is then not NOT_RELEASABLE)
    Idempotency first = partitions == 0 ? null : built[0].idempotency();
    boolean releasable = first != null && first.tail() != ReleaseRecord.NOT_RELEASABLE;
    return new Prepared(m, cp, plan, op, inBuffers ? null : toRequests(built, partitions),
        partitions == 0 ? null : built[0].partition(), key, horizon, releaseHorizon > 0, releasable, sealedTail, time);
  }

  /**
   * The key a decision is remembered under in its first partition: the message id's fingerprint, or
   * for a decision releasable by id ({@code releaseHorizon} above 0) a random one; null for none.
   */
  private static byte[] recordKey(Message m, Operation op, int partitions, long releaseHorizon) {
    if (m.messageId() != null && partitions > 0 && op != Operation.RELEASE) {
      return Fingerprint.ofMessageId(m.messageId());
    }
    if (op == Operation.DECIDE && partitions > 0 && releaseHorizon > 0) {
      byte[] key = new byte[16];
      java.util.concurrent.ThreadLocalRandom.current().nextBytes(key);
      return key;
    }
    return null;
  }

  /** How long the record under {@link #recordKey} is kept: a message id as long as any rule reads it. */
  private static long recordHorizon(CompiledPolicy cp, Message m, long releaseHorizon) {
    return m.messageId() != null ? Math.max(cp.messageHorizonMs, releaseHorizon) : releaseHorizon;
  }

  /**
   * Fills {@code requests[0, partitions)}, one per partition of {@code plan}, remembering the decision
   * under {@code key} (null: not remembered) for {@code horizon} ms; returns the release record's tail
   * when the decision id is to seal it (the store then keeps nothing of it), else null. The keys are
   * written in {@code buffers} (one partition only: the buffers are one request's), or when it is
   * null in arrays of their own, which a store may keep ({@link #toRequests}).
   */
  private byte[] fill(Message m, CompiledPolicy cp, CompiledPolicy.Plan plan, Operation op, long time,
      byte[] key, long horizon, ReusableRequest[] requests, int partitions, Scratch buffers) {
    assert buffers == null || partitions == 1;
    // copied into the keys below and kept by none of them: the thread's scratch, not an array per decision
    byte[] fingerprint = Fingerprint.ofMessageContentInScratch(m);
    long alignAt = time == PartitionRequest.STORE_TIME ? clock.millis() : time;
    boolean decide = op == Operation.DECIDE && partitions > 0;
    byte[] sealedTail = null;
    // Built last to first, each once: the first partition's record lists the others' keys.
    for (int j = partitions - 1; j >= 0; j--) {
      CompiledPolicy.Partition partition = plan.partitions[j];
      byte[] partitionKey = partition.recipient
          ? buffers != null ? Keys.recipientPartition(cp.tenantUtf8, m.recipient(), buffers.partitionKey)
              : Keys.recipientPartition(cp.tenantUtf8, m.recipient())
          : Keys.sharedPartition(m.tenant(), partition.dims, values(m, partition.dims), fingerprint);
      ReusableRequest request = requests[j].set(partitionKey, op, time, m.cost(), 0L, null, m.category());
      addCounters(request, m, partition, fingerprint, alignAt, buffers);
      if (key != null && (j == 0 || decide)) {
        // Each partition remembers the decision (the recipient's first, when a rule is keyed by it),
        // atomically with its counts: the first under the message id or a random key, with the other
        // partitions listed; a refusal further on releases it, and the record with it.
        byte[] tail = decide ? ReleaseRecord.encode(m.cost(), request, requests, partitions, j == 0)
            : ReleaseRecord.NOT_RELEASABLE;
        if (partitions == 1 && m.messageId() == null && tail != ReleaseRecord.NOT_RELEASABLE
            && DecisionIds.sealsRelease(partitionKey.length, tail.length)) {
          // the usual decision: its id seals the release, and the store keeps nothing of it (or, one
          // without incarnations, a record that is the claim alone)
          sealedTail = tail;
          request.idempotency(new Idempotency(key, horizon, ReleaseRecord.IN_ID, false, incarnationCandidate(key)));
        } else {
          request.idempotency(new Idempotency(ReleaseRecord.keyIn(key, j), horizon, tail, j == 0 && m.messageId() != null));
        }
      }
    }
    return sealedTail;
  }

  /** The first {@code n} requests as immutable ones, sharing their arrays (filled without buffers). */
  private static PartitionRequest[] toRequests(ReusableRequest[] requests, int n) {
    PartitionRequest[] out = new PartitionRequest[n];
    for (int i = 0; i < n; i++) {
      out[i] = requests[i].toRequest();
    }
    return out;
  }

  /** The incarnation a partition takes if this decision creates it: the random key's first 8 bytes, never 0. */
  private static long incarnationCandidate(byte[] key) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = v << 8 | (key[i] & 0xff);
    }
    return v != 0 ? v : 1;
  }

  /** Adds the partition's counters for {@code m} to {@code request}, their keys in {@code buffers} if not null. */
  private static void addCounters(ReusableRequest request, Message m, CompiledPolicy.Partition partition,
      byte[] fingerprint, long alignAt, Scratch buffers) {
    CompiledPolicy.Group[] groups = partition.groups;
    for (int i = 0; i < groups.length; i++) {
      CompiledPolicy.Group g = groups[i];
      if (g.fixedRequest != null) {
        request.addCounter(g.fixedRequest); // the same for every message: no key to build
        continue;
      }
      // Recipient and content are not read as values (the partition names one, the fingerprint the other).
      byte[] key;
      if (g.plainKey && g.contentKeyed && partition.recipient) {
        int length = 8 + fingerprint.length;
        key = Keys.contentCounterKey(g.id, fingerprint, buffers != null ? buffers.counterKey(i, length) : new byte[length]);
      } else {
        key = Keys.counterKey(g.id, g.key, g.plainKey ? null : values(m, g.key), fingerprint, partition.recipient);
      }
      request.addCounter(key, g.spec, g.alignMs(alignAt));
    }
  }

  private static String[] values(Message m, List<dev.fcap.model.Dimension> dims) {
    String[] values = new String[dims.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = dims.get(i).valueOf(m);
    }
    return values;
  }

  private CompletableFuture<Decision> execute(Prepared p) {
    if (p.waitsForIds(ids)) {
      // the first decision of this engine loads the decision-id key; failing that, its id is random
      return ids.load().handle((loaded, error) -> null).thenCompose(ignored -> executeNow(p));
    }
    return executeNow(p);
  }

  private CompletableFuture<Decision> executeNow(Prepared p) {
    if (p.requests.length == 0) {
      String id = null;
      if (p.releasing && p.op == Operation.DECIDE) { // releasable, undoes nothing
        long horizon = releaseHorizonMs < 0 ? CompiledPolicy.MAX_HORIZON_MS : releaseHorizonMs;
        byte[] tenant = p.policy != null ? p.policy.tenantUtf8
            : p.message.tenant().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        long now = p.time == PartitionRequest.STORE_TIME ? clock.millis() : p.time;
        byte[] unique = new byte[16]; // no record is kept under it: it only makes the id unique
        java.util.concurrent.ThreadLocalRandom.current().nextBytes(unique);
        id = ids.seal(Keys.nothingPartition(tenant), unique, now + horizon);
      }
      return CompletableFuture.completedFuture(new Decision(true, id != null ? id : randomId(), 0, List.of(), List.of(), List.of(),
          false, clock.millis(), p.policy == null ? 0 : p.policy.policy.version()));
    }
    if (p.requests.length == 1 && storeAnswersHere) { // a store that does not answer here is not asked
      Scratch scratch = Scratch.take();
      try {
        if (store.applyInto(scratch.requests(1)[0].set(p.requests[0]), scratch.result)) {
          // the embedded store answers on this thread, into this thread's answer: no result, arrays or future
          return CompletableFuture.completedFuture(finish(p, scratch.answers));
        }
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(new java.util.concurrent.CompletionException(e)); // as thenApply
      } finally {
        scratch.release();
      }
    }
    if (p.requests.length == 1) {
      return store.apply(p.requests[0]).thenApply(r -> finish(p, new PartitionAnswer[] {r}));
    }
    return chain(p.requests, p.op, 0, new PartitionResult[p.requests.length]).thenApply(results -> finish(p, results));
  }

  /** Decides partitions in order; on a refusal, releases what was recorded and dry-runs the rest. */
  private CompletableFuture<PartitionResult[]> chain(PartitionRequest[] requests, Operation op, int i,
      PartitionResult[] results) {
    if (i == requests.length) {
      return CompletableFuture.completedFuture(results);
    }
    return store.apply(requests[i]).exceptionallyCompose(error -> {
      // a later partition failed (unreachable, full): take back what the earlier ones recorded
      List<CompletableFuture<?>> undo = new ArrayList<>();
      for (int j = 0; j < i && op == Operation.DECIDE; j++) {
        undo.add(store.apply(requests[j].asRelease(results[j].time())));
      }
      return CompletableFuture.allOf(undo.toArray(CompletableFuture[]::new))
          .handle((ignored, e) -> (PartitionResult) null)
          .thenCompose(ignored -> CompletableFuture.failedFuture(error));
    }).thenCompose(r -> {
      results[i] = r;
      if (r.replayOf() != null) {
        return CompletableFuture.completedFuture(results); // decided before: the other partitions were counted then
      }
      if (r.allowed() || op != Operation.DECIDE) {
        return chain(requests, op, i + 1, results);
      }
      List<CompletableFuture<?>> pending = new ArrayList<>();
      for (int j = 0; j < i; j++) {
        pending.add(store.apply(requests[j].asRelease(results[j].time())));
      }
      for (int j = i + 1; j < requests.length; j++) {
        int at = j;
        pending.add(store.apply(requests[j].asCheck()).thenAccept(checked -> results[at] = checked));
      }
      return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).thenApply(ignored -> results);
    });
  }

  private Decision finish(Prepared p, PartitionAnswer[] results) {
    CompiledPolicy.Plan plan = p.plan;
    boolean replayed = results[0].replayOf() != null;
    RuleOutcome[] outcomes = new RuleOutcome[plan.rules.length]; // one copy into the Decision's list, no ArrayList
    int reported = 0;
    List<String> blocked = List.of();
    List<String> shadowBlocked = List.of();
    long retryAfter = 0;
    for (int i = 0; i < plan.rules.length; i++) {
      Rule rule = p.policy.rule(plan.rules[i]);
      PartitionAnswer r = results[plan.rulePartition[i]];
      if (r == null) {
        continue; // a replay reports the rules of the partition that remembered it
      }
      int at = plan.ruleOffset[i];
      long used = r.used(at);
      long retryAt = r.retryAt(at);
      boolean allowed = r.admits(at);
      long ruleRetry = allowed ? 0 : retryAt == PartitionResult.NEVER ? -1 : retryAt - r.time();
      outcomes[reported++] = new RuleOutcome(rule.id(), rule.limit(), rule.windowMs(), used,
          Math.max(0, rule.limit() - used), allowed, rule.enforced(), ruleRetry);
      if (!allowed) {
        if (rule.enforced()) {
          blocked = append(blocked, rule.id());
          retryAfter = retryAfter < 0 || ruleRetry < 0 ? -1 : Math.max(retryAfter, ruleRetry);
        } else {
          shadowBlocked = append(shadowBlocked, rule.id());
        }
      }
    }
    boolean allowed = blocked.isEmpty();
    boolean degraded = false;
    for (PartitionAnswer r : results) {
      degraded |= r != null && r.degraded(); // null: not reached by a replayed decision
    }
    String id = null;
    if (allowed && p.recordKey != null && p.releasing && (replayed ? ReleaseRecord.decode(
        results[0].replayOf().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1)) != null : p.releasable)) {
      // a replay answers the id of the first decision: the same record sealed the same way
      long expiresAt = results[0].time() + p.recordHorizonMs;
      id = p.sealedTail != null
          ? ids.seal(p.firstPartition, p.recordKey, expiresAt, results[0].time(), results[0].incarnation(), p.sealedTail)
          : ids.seal(p.firstPartition, p.recordKey, expiresAt);
    }
    List<RuleOutcome> rules = List.of(reported == outcomes.length ? outcomes : java.util.Arrays.copyOf(outcomes, reported));
    return new Decision(allowed, id != null ? id : randomId(), retryAfter, blocked, shadowBlocked, rules, degraded,
        results[0].time(), p.policy.policy.version(), replayed);
  }

  private static final java.util.HexFormat HEX = java.util.HexFormat.of();

  /**
   * The id of a decision that cannot be released: 96 random bits in hex (never opens as a sealed id:
   * the MAC refuses it). Not {@code String.format}: it took 15 % of a decision's CPU in
   * {@code CpuHarness} (most decisions there are refusals).
   */
  private static String randomId() {
    byte[] random = new byte[12];
    java.util.concurrent.ThreadLocalRandom.current().nextBytes(random);
    return HEX.formatHex(random);
  }

  /** An immutable list plus one id; lists of blocking rules are short and usually empty. */
  private static List<String> append(List<String> list, String id) {
    if (list.isEmpty()) {
      return List.of(id);
    }
    String[] grown = list.toArray(new String[list.size() + 1]);
    grown[list.size()] = id;
    return List.of(grown);
  }

  /** Settings of an {@link Engine}. */
  public static final class Builder {
    private final Store store;
    private Clock clock = Clock.system();
    private boolean callerTime;
    private long releaseHorizonMs = -1;
    private List<Policy> policies = List.of();

    private Builder(Store store) {
      this.store = Objects.requireNonNull(store, "store");
    }

    /** The clock for calendar alignment; use the store's clock. Default: the system clock. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Allow {@link #decideAt} and {@link #checkAt} (replays, tests). Off by default. */
    public Builder callerTime(boolean allowed) {
      this.callerTime = allowed;
      return this;
    }

    /**
     * How long an admitted decision stays releasable by its decision id (its release record is kept
     * that long: docs/server.md, "release.horizon"); 0 turns releases by decision id off (a release by
     * message id still works, for as long as the id is remembered). Default: the policy's longest
     * window, at most 7 days.
     */
    public Builder releaseHorizon(java.time.Duration horizon) {
      if (horizon.isNegative() || horizon.toMillis() > CompiledPolicy.MAX_HORIZON_MS) {
        throw new IllegalArgumentException("the release horizon must be between 0 and 7 days");
      }
      this.releaseHorizonMs = horizon.toMillis();
      return this;
    }

    public Builder policies(List<Policy> policies) {
      this.policies = List.copyOf(policies);
      return this;
    }

    public Builder policy(Policy policy) {
      return policies(List.of(policy));
    }

    public Engine build() {
      return new Engine(this);
    }
  }
}
