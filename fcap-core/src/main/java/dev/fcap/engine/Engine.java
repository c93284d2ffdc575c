package dev.fcap.engine;

import dev.fcap.model.Decision;
import dev.fcap.model.InvalidMessageException;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.ReleaseResult;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionAnswer;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.Store;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.internal.CallingThreadStore;
import dev.fcap.store.internal.ReusableRequest;
import dev.fcap.time.Clock;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;

/**
 * Decides messages against the policies of their tenants, on a {@link Store}.
 *
 * <p><b>How a decision flows.</b> The tenant's {@link CompiledPolicy} picks the rules that apply and
 * a cached plan says which partitions and counters they touch. The send windows that apply are
 * judged first, at the decision's time ({@link WindowCheck}): a shut enforced window turns the step
 * into a dry run, so nothing is recorded. So does an entry of the tenant's suppression list that
 * covers the message: read here before the step on a store that keeps the lists in this process,
 * or by the store in the recipient partition's own step ({@link dev.fcap.store.SuppressionCheck}).
 * {@link RequestBuilder} turns the message into one request
 * per partition. Counters keyed by the recipient all live in the
 * recipient's partition, so the common policy is one atomic store step; rules keyed without the
 * recipient live in shared partitions, decided one after another ({@link PartitionChain}).
 * {@link DecisionAssembly} turns the answers into a {@link Decision}.
 *
 * <p><b>The fast path.</b> On a store that answers on the calling thread ({@link
 * CallingThreadStore}, the embedded store), a one-partition decision is built in the
 * thread's buffers ({@link Scratch}) and answered into the thread's answer, so that the
 * {@link Decision} is all it allocates ({@link #answerHere}). Any other store gets requests of their
 * own, which it may keep until it answers.
 *
 * <p>The engine knows no storage and the store knows no rules. Policies are swapped atomically
 * ({@link PolicyRegistry}); counters survive edits of limits and windows (see {@link CompiledPolicy}).
 * Releases ({@link Releases}) and inspection ({@link Inspector}) are parts of their own.
 */
public final class Engine implements AutoCloseable {
  /**
   * The answers of {@link #decideAt(Message, long, RuleVerdicts)} when no rule applies or the store
   * answered on the calling thread: shared, already complete (completing them again changes nothing).
   */
  private static final CompletableFuture<Boolean> ADMITTED = CompletableFuture.completedFuture(true);
  private static final CompletableFuture<Boolean> REFUSED = CompletableFuture.completedFuture(false);
  private final Store store;
  /** The store when it answers on the calling thread ({@link CallingThreadStore}), else null. */
  private final CallingThreadStore storeHere;
  /** How long admitted decisions stay releasable by decision id: -1 the policy's longest window, 0 never. */
  private final long releaseHorizonMs;
  private final CallerTime callerTime;
  private final DecisionIds ids;
  private final PolicyRegistry policies = new PolicyRegistry();
  private final RequestBuilder requests;
  private final DecisionAssembly assembly;
  private final Releases releases;
  private final Inspector inspector;
  private final Clock clock;

  private Engine(Builder b) {
    this.store = b.store;
    this.storeHere = store instanceof CallingThreadStore here && here.answersOnCallingThread() ? here : null;
    this.releaseHorizonMs = b.releaseHorizonMs;
    this.callerTime = new CallerTime(b.callerTime);
    this.ids = new DecisionIds(store);
    this.clock = b.clock;
    this.requests = new RequestBuilder(b.clock, releaseHorizonMs, store.as(SuppressionList.class).orElse(null),
        store.books());
    this.assembly = new DecisionAssembly(ids, b.clock, releaseHorizonMs);
    this.releases = new Releases(store, policies, ids, callerTime, b.clock, requests);
    this.inspector = new Inspector(store, policies);
    if (releaseHorizonMs != 0) {
      ids.load(); // at once, so decisions do not wait for it; a failed load is tried again by the next one
    }
    policies.setAll(b.policies);
  }

  public static Builder builder(Store store) {
    return new Builder(store);
  }

  /** Replaces every policy at once; tenants not listed lose their rules. */
  public void setPolicies(List<Policy> newPolicies) {
    policies.setAll(newPolicies);
  }

  /** Replaces the policy of one tenant; the next decision of that tenant uses it. */
  public void setPolicy(Policy policy) {
    policies.set(policy);
  }

  public Optional<Policy> policy(String tenant) {
    return policies.policy(tenant);
  }

  public List<Policy> policies() {
    return policies.all();
  }

  /** Decides and, if admitted, records the message. */
  public CompletableFuture<Decision> decide(Message message) {
    return run(message, Operation.DECIDE, PartitionRequest.STORE_TIME);
  }

  /**
   * {@link #decide} without a future: the decision itself, made on the calling thread where the store
   * answers there (the embedded store), else waited for. What a caller that blocks on the decision
   * anyway calls (the library's synchronous path, the starter): it allocates no future.
   *
   * @throws dev.fcap.model.InvalidMessageException for a deferral that cannot be honoured
   * @throws RuntimeException what {@link #decide}'s future fails with ({@link dev.fcap.store.StoreException}
   *     and the like), as it is, not wrapped
   */
  public Decision decideNow(Message message) {
    Objects.requireNonNull(message, "message");
    Object here = decideHere(message, Operation.DECIDE, PartitionRequest.STORE_TIME);
    if (here instanceof Decision d) {
      return d;
    }
    try {
      return execute((Prepared) here).join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException cause ? cause : e;
    }
  }

  /**
   * Fails unless {@code message}'s deferral ({@link Message#defer()}), if it has one, can be honoured
   * now: the store books ({@link Store#books()}), every rule that applies to it is keyed by the
   * recipient and is a sliding log (below the large-log limit) or a fixed window without a zone, and its
   * {@code notAfter} is at most 7 days ahead.
   * {@link #decide} fails the same way; a server asks first, to answer a clear error.
   *
   * @throws dev.fcap.model.InvalidMessageException naming the field ({@code defer} or {@code notAfter})
   */
  public void requireDeferrable(Message message) {
    requireDeferrableAt(message, clock.millis());
  }

  /** {@link #requireDeferrable} for a decision at a caller-supplied time ({@link #decideAt}). */
  public void requireDeferrableAt(Message message, long epochMillis) {
    if (message.defer() == null) {
      return;
    }
    CompiledPolicy cp = policies.get(message.tenant());
    requests.requireDeferrable(cp, cp == null ? null : cp.plan(message), message, epochMillis);
  }

  /** Decides without recording anything (dry run). */
  public CompletableFuture<Decision> check(Message message) {
    return run(message, Operation.CHECK, PartitionRequest.STORE_TIME);
  }

  /** {@link #decide} at a caller-supplied time (replays, tests); only if the builder allowed it. */
  public CompletableFuture<Decision> decideAt(Message message, long epochMillis) {
    return run(message, Operation.DECIDE, callerTime.accept(epochMillis));
  }

  /** {@link #check} at a caller-supplied time; only if the builder allowed it. */
  public CompletableFuture<Decision> checkAt(Message message, long epochMillis) {
    return run(message, Operation.CHECK, callerTime.accept(epochMillis));
  }

  /**
   * {@link #decideAt(Message, long)} for a caller that keeps its own tallies instead of a
   * {@link Decision} per message (a replay of millions of rows): each rule that applied reports to
   * {@code verdicts}, in policy order, on the thread that completes the decision (the caller's, on a
   * store that answers at once), and nothing else of the decision is built: no outcomes, no lists, no
   * id (but for a deferred message, whose decision is made in full, and which reports its booking too:
   * {@link RuleVerdicts#booked}). Its decisions have no id, so it is refused on an engine whose
   * admitted decisions are releasable by id (build it with {@code releaseHorizon(Duration.ZERO)}); a
   * message id is remembered as usual.
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
    long time = callerTime.accept(epochMillis);
    CompiledPolicy cp = policies.get(message.tenant());
    if (message.defer() != null && cp != null) {
      // rare in a replay: the decision in full, which says when it is booked, reported rule by rule
      return run(message, Operation.DECIDE, time).thenApply(d -> DecisionAssembly.report(cp, d, verdicts));
    }
    CompiledPolicy.Plan plan = cp == null ? null : cp.plan(message);
    if (requests.probes(plan, Operation.DECIDE)) { // the store keeps the entries, and no request reaches them
      return store.apply(requests.probe(message, time)).thenCompose(r ->
          verdicts(message, time, cp, plan, r.suppressed() == null, verdicts));
    }
    return verdicts(message, time, cp, plan, requests.suppression(message, Operation.DECIDE, time) == null, verdicts);
  }

  /**
   * The rest of {@link #decideAt(Message, long, RuleVerdicts)}: {@code open} unless the recipient is
   * suppressed for the message (then it is refused whatever the rules say; they still report, from a
   * dry run); a store that checks in its step may find it suppressed too.
   */
  private CompletableFuture<Boolean> verdicts(Message message, long time, CompiledPolicy cp, CompiledPolicy.Plan plan,
      boolean open, RuleVerdicts verdicts) {
    if (plan == null || plan.partitions.length == 0 && plan.windows.length == 0) {
      return open ? ADMITTED : REFUSED; // no rule applies
    }
    WindowCheck windows = WindowCheck.of(cp, plan, message, time);
    if (plan.partitions.length == 0) {
      return DecisionAssembly.report(cp, plan, message, NO_ANSWERS, windows, verdicts) && open ? ADMITTED : REFUSED;
    }
    Operation op = open ? WindowCheck.effective(Operation.DECIDE, windows) : Operation.CHECK;
    int partitions = plan.partitions.length;
    Scratch scratch = Scratch.take();
    PartitionRequest[] own;
    try {
      ReusableRequest[] built = scratch.requests(partitions);
      if (partitions == 1 && storeHere != null) {
        requests.fillUnreleasable(message, cp, plan, op, time, built, 1, scratch);
        PartitionAnswer[] answers = answerHere(built[0], scratch);
        if (answers != null) {
          return DecisionAssembly.report(cp, plan, message, answers, windows, verdicts) && open ? ADMITTED : REFUSED;
        }
      }
      requests.fillUnreleasable(message, cp, plan, op, time, built, partitions, null);
      own = RequestBuilder.toRequests(built, partitions);
    } catch (RuntimeException e) {
      return failed(e);
    } finally {
      scratch.release();
    }
    return PartitionChain.decide(store, own, op)
        .thenApply(results -> DecisionAssembly.report(cp, plan, message, results, windows, verdicts) && open);
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
     * admitted the message, or refused it; {@code enforced}: whether that verdict could refuse the
     * message (the rule is enforced, and the message is neither one of its {@code countOnly} ones
     * nor an override), else it only reports what the rule would have done.
     */
    void rule(int index, boolean allowed, boolean enforced);

    /**
     * The message, deferred and not admitted now, was booked for {@code sendAt} (epoch ms); after
     * its rules' verdicts. The default ignores it.
     */
    default void booked(long sendAt) {}
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
    for (Message m : messages) {
      Prepared p;
      try {
        p = requests.prepare(policies.get(m.tenant()), m, op, PartitionRequest.STORE_TIME);
      } catch (InvalidMessageException e) { // a deferral that cannot be honoured: this message's alone
        out.add(failed(e));
        continue;
      }
      if (p.requests().length == 1 && !requests.probes(p.plan(), p.op())) {
        single.add(p);
        singleRequests.add(p.requests()[0]);
        out.add(null); // its slot, filled below
      } else {
        out.add(execute(p));
      }
    }
    if (!singleRequests.isEmpty()) {
      // one future per request: a request the store refuses (full) or fails fails its decision only
      List<CompletableFuture<PartitionResult>> results = store.applyAll(singleRequests);
      int s = 0;
      for (int i = 0; i < out.size(); i++) {
        if (out.get(i) == null) {
          Prepared p = single.get(s);
          out.set(i, results.get(s++).thenApply(r -> assembly.decision(p, new PartitionAnswer[] {r})));
        }
      }
    }
    return out;
  }

  /** Undoes an admitted decision (the send failed); true iff released (see {@link #releaseDecision}). */
  public CompletableFuture<Boolean> release(String decisionId) {
    return release(decisionId, tenant -> true);
  }

  /** {@link #releaseDecision}, answered as whether the decision is released. */
  public CompletableFuture<Boolean> release(String decisionId, Predicate<String> mayRelease) {
    return releaseDecision(decisionId, mayRelease).thenApply(ReleaseResult::released);
  }

  /**
   * Undoes an admitted decision (the send failed), from any node, for as long as the release horizon
   * ({@link Releases}). Answers released also when the decision was released before (idempotent;
   * also by message id, or when its recipient was reset); {@code expired} once the horizon has
   * passed; {@code unknown} for any id this deployment did not issue for an admitted decision of a
   * tenant {@code mayRelease} accepts (a caller's key may release only its own tenants' decisions).
   * Fails with the store's error when the store cannot answer: never a silent false.
   */
  public CompletableFuture<ReleaseResult> releaseDecision(String decisionId, Predicate<String> mayRelease) {
    return releases.byDecisionId(decisionId, mayRelease);
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
    return releases.byMessageId(message);
  }

  /**
   * A recipient's live counters, per rule and per content fingerprint, and its policy's send windows,
   * in the policy's time zone (UTC without one).
   */
  public CompletableFuture<Inspection> inspect(String tenant, String recipient) {
    return inspector.inspect(tenant, recipient, null);
  }

  /**
   * A recipient's live counters and its policy's send windows, read in {@code timeZone}, the
   * recipient's zone (null: the policy's, else UTC): recipient-zone calendar counters and windows
   * are placed in it as they are for a message carrying that zone.
   */
  public CompletableFuture<Inspection> inspect(String tenant, String recipient, ZoneId timeZone) {
    return inspector.inspect(tenant, recipient, timeZone);
  }

  /**
   * The store's suppression lists (recipients that must receive nothing: every decision in an
   * entry's scope is refused, with nothing recorded); empty when the store keeps none.
   */
  public Optional<SuppressionList> suppressions() {
    return store.as(SuppressionList.class);
  }

  /**
   * Forgets a recipient (erasure requests): every counter in its partition, and with them the release
   * records kept there: a release of an earlier decision then finds no record and gives nothing back
   * (what it counted is gone, and it must not take units from what was counted after the reset).
   */
  public CompletableFuture<Boolean> reset(String tenant, String recipient) {
    return store.delete(Keys.recipientPartition(tenant, recipient));
  }

  @Override
  public void close() {
    store.close();
  }

  private CompletableFuture<Decision> run(Message message, Operation op, long time) {
    Objects.requireNonNull(message, "message");
    Object here;
    try {
      here = decideHere(message, op, time);
    } catch (RuntimeException e) { // a deferral that cannot be honoured, or what the store failed with
      return failed(e);
    }
    return here instanceof Decision d ? CompletableFuture.completedFuture(d) : execute((Prepared) here);
  }

  /**
   * The decision on {@code message} when it is made on this thread (one partition, its request in
   * the thread's buffers, a store that answers here), else the {@link Prepared} with requests of its
   * own to send the store.
   *
   * @throws RuntimeException what {@link #decide}'s future fails with
   */
  private Object decideHere(Message message, Operation op, long time) {
    Scratch scratch = Scratch.take();
    try {
      Prepared p = requests.prepare(policies.get(message.tenant()), message, op, time, scratch, storeHere != null);
      if (p.requests() != null) {
        return p;
      }
      if (!p.waitsForIds(ids)) {
        PartitionAnswer[] answers = answerHere(scratch.requests(1)[0], scratch);
        if (answers != null) {
          return assembly.decision(p, answers, scratch);
        }
      }
      // a store that did not answer here, or a decision that waits: a request of its own
      return requests.prepare(p.policy(), message, op, time);
    } finally {
      scratch.release();
    }
  }

  private static final PartitionAnswer[] NO_ANSWERS = {};

  /**
   * The fast path, the one place a decision is answered on the calling thread: the store decides
   * {@code request} (in {@code scratch}) into the scratch's answer, to be read before the scratch is
   * released; nothing is allocated for the request or the answer. Null when the store did not answer
   * here (it then changed nothing).
   *
   * @throws RuntimeException what the store's {@code apply} would fail with
   */
  private PartitionAnswer[] answerHere(ReusableRequest request, Scratch scratch) {
    return storeHere.applyInto(request, scratch.result) ? scratch.answers : null;
  }

  /** A failure as a store's future would carry it. */
  private static <T> CompletableFuture<T> failed(RuntimeException e) {
    return CompletableFuture.failedFuture(new CompletionException(e));
  }

  private CompletableFuture<Decision> execute(Prepared p) {
    if (p.suppressed() == null && requests.probes(p.plan(), p.op())) {
      // the store keeps the suppression entries and no request reaches the recipient's: read it first
      return store.apply(requests.probe(p.message(), p.time())).thenCompose(r -> r.suppressed() == null
          ? executeLoaded(p)
          : executeLoaded(requests.prepareSuppressed(p.policy(), p.message(), p.op(), p.time(), r.suppressed())));
    }
    return executeLoaded(p);
  }

  private CompletableFuture<Decision> executeLoaded(Prepared p) {
    if (p.waitsForIds(ids)) {
      // the first decision of this engine loads the decision-id key; failing that, its id is random
      return ids.load().handle((loaded, error) -> null).thenCompose(ignored -> executeNow(p));
    }
    return executeNow(p);
  }

  private CompletableFuture<Decision> executeNow(Prepared p) {
    PartitionRequest[] own = p.requests();
    if (own.length == 0) {
      return CompletableFuture.completedFuture(assembly.unrestricted(p));
    }
    if (own.length == 1) {
      return store.apply(own[0]).thenApply(r -> assembly.decision(p, new PartitionAnswer[] {r}));
    }
    return (p.booking() != null && p.op() == Operation.DECIDE ? PartitionChain.book(store, own, p.booking())
        : PartitionChain.decide(store, own, p.op())).thenApply(results -> assembly.decision(p, results));
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

    /**
     * The clock for calendar alignment and send windows of decisions at the store's time; use the
     * store's clock. Default: the system clock.
     */
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
    public Builder releaseHorizon(Duration horizon) {
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
