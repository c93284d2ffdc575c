package dev.fcap.server.decision;

import dev.fcap.engine.Engine;
import dev.fcap.engine.Inspection;
import dev.fcap.model.Decision;
import dev.fcap.model.InvalidMessageException;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.server.audit.AuditLog;
import dev.fcap.server.audit.RecentDenials;
import dev.fcap.server.auth.Principal;
import dev.fcap.server.auth.Role;
import dev.fcap.server.failure.FailoverStore;
import dev.fcap.server.failure.FailureAction;
import dev.fcap.server.failure.FailurePolicy;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.metrics.ServerMetrics;
import dev.fcap.store.StoreException;
import dev.fcap.time.Clock;
import java.io.UncheckedIOException;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntFunction;

/**
 * What the HTTP and gRPC APIs call once they have read a request: the one transport-neutral place for
 * role checks, batch assembly, the failure policy's allow/deny rule, decision-id bookkeeping, metrics
 * and audit. Transports only parse and render.
 *
 * <p><b>When the store fails.</b> The {@link Engine} decides on the store chain (metered, then
 * failover, then the store). A decision that fails because the store is down ({@link FailoverStore.Down},
 * for a category not decided locally) gets the category's action alone: {@code allow} admits,
 * {@code deny} refuses (degraded, reason {@code store_down}). A request whose new partition the full
 * embedded store cannot hold gets {@code failure.full}'s action (see {@code OutageStore.decideWhenFull}):
 * {@code local} is decided on the node's own store, {@code allow} admits, {@code deny} refuses with the
 * delay until room may free (degraded, reason {@code store_full}). After the store lost its data, with
 * {@code failure.storeReset: policy}, decisions are made as in an outage with reason {@code store_reset}
 * and a deny's delay lasting until the failure policy stops deciding. A store that
 * is slow (a call past its deadline) is backpressure: {@code 429 store_busy} with a retry delay; one
 * that fails before an outage is declared is {@code 503 store_unavailable}. Nothing was recorded for
 * either (see {@link FailoverStore} on late answers).
 */
public final class DecisionService {
  /** Decision ids are 24 hex characters; anything longer than this is refused unread. */
  /**
   * The longest decision id accepted: a sealed id grows with its partition key (the engine issues
   * releasable ids up to 4,000 characters, so that one fits an HTTP/1 request line); longer is bad input.
   */
  public static final int MAX_DECISION_ID = 4000;
  private final Engine engine;
  private final FailoverStore failover;
  private final FailurePolicy failure;
  private final AuditLog audit;
  private final ServerMetrics metrics;
  private final Clock clock;
  private final int maxBatch;
  private final SuppressionService suppressions;

  public DecisionService(Engine engine, FailoverStore failover, FailurePolicy failure, AuditLog audit,
      ServerMetrics metrics, Clock clock, int maxBatch) {
    this.engine = engine;
    this.failover = failover;
    this.failure = failure;
    this.audit = audit;
    this.metrics = metrics;
    this.clock = clock;
    this.maxBatch = maxBatch;
    this.suppressions = new SuppressionService(engine, audit, clock, metrics);
  }

  /** The tenants' suppression lists, as the APIs read and change them. */
  public SuppressionService suppressions() {
    return suppressions;
  }

  /** One item of a batch: its decision, or why it was not decided. */
  public record Outcome(Decision decision, ApiException error) {}

  /** A recipient's counters, whether they come from the outage store, and recent denials. */
  public record Inspected(Inspection inspection, boolean degraded, List<RecentDenials.Denial> recentDenials) {}

  /**
   * Readiness: the store answers within its deadline and no outage is in force. A full store is
   * reported ({@code storeFull}, with the delay its last refusal gave until room may free, -1 if
   * unknown) but is still ready: the node decides every recipient it holds, and new ones by
   * {@code failure.full}; another node would have no more room.
   */
  public record Readiness(boolean ready, boolean storeDown, boolean storeFull, long fullRetryAfterMs, long storeResets,
      FailoverStore.Reset lastReset, long resetUntil) {}

  public CompletableFuture<Decision> decide(Principal who, Message m, boolean dryRun) {
    authorize(who, m);
    if (!dryRun) {
      requireDeferrable(m);
    }
    long start = System.nanoTime();
    long outages = failover.outages();
    CompletableFuture<Decision> d = dryRun ? engine.check(m) : engine.decide(m);
    return d.handle((decision, error) -> error == null ? local(m, decision, outages) : fallback(m, error)).whenComplete((x, error) -> {
      metrics.recordDecisionNanos(dryRun ? "check" : "decide", System.nanoTime() - start);
      if (x != null) {
        recorded(m, x, who, dryRun);
      }
    });
  }

  /**
   * The longest the store may take over a batch of {@code size}: its calls of {@code store.callSize}
   * go one after another, each bounded by {@code store.timeout}. A transport that bounds a request's
   * time must leave the batch this much, or it answers "timed out" for items already decided.
   */
  public java.time.Duration storeTimeFor(int size) {
    long calls = Math.max(1, (size + (long) failure.callSize() - 1) / failure.callSize());
    return failure.timeout().multipliedBy(calls);
  }

  /**
   * Decides a batch of {@code size} items read by {@code read} (which throws {@link ApiException} for
   * an invalid item); results in order, a bad or undecided item with its own error. If every valid item
   * failed with the same store error (busy, unavailable), the whole batch fails with it.
   */
  public CompletableFuture<List<Outcome>> decideBatch(Principal who, int size, IntFunction<Message> read,
      boolean dryRun) {
    if (size > maxBatch) {
      throw ApiException.badRequest("batch_too_large", "a batch holds at most " + maxBatch + " requests, got " + size,
          "requests");
    }
    Outcome[] outcomes = new Outcome[size];
    List<Message> valid = new ArrayList<>(size);
    List<Integer> positions = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      try {
        Message m = read.apply(i);
        authorize(who, m);
        if (!dryRun) {
          requireDeferrable(m);
        }
        valid.add(m);
        positions.add(i);
      } catch (ApiException e) {
        outcomes[i] = new Outcome(null, e);
      }
    }
    long start = System.nanoTime();
    long outages = failover.outages();
    List<CompletableFuture<Decision>> decided = engine.decideAll(valid, dryRun);
    List<CompletableFuture<Outcome>> pending = new ArrayList<>(decided.size());
    for (int i = 0; i < decided.size(); i++) {
      Message m = valid.get(i);
      pending.add(decided.get(i).handle((d, error) -> {
        try {
          Decision x = error == null ? local(m, d, outages) : fallback(m, error);
          recorded(m, x, who, dryRun);
          return new Outcome(x, null);
        } catch (ApiException e) {
          return new Outcome(null, e);
        }
      }));
    }
    return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
      metrics.recordDecisionNanos("batch", System.nanoTime() - start);
      ApiException common = null;
      int failed = 0;
      for (int i = 0; i < pending.size(); i++) {
        Outcome o = pending.get(i).join();
        outcomes[positions.get(i)] = o;
        if (o.error() != null && o.error().status() >= 429) {
          failed++;
          common = common == null || common.status() == o.error().status() ? o.error() : common;
        }
      }
      if (failed > 0 && failed == pending.size() && common != null) {
        throw common;
      }
      return List.of(outcomes);
    });
  }

  /**
   * Releases a decision the caller may see: released (also when it was before), or why not (expired,
   * or unknown: garbled, forged, denied or of another tenant). Fails when the store cannot answer.
   */
  public CompletableFuture<dev.fcap.model.ReleaseResult> release(Principal who, String decisionId) {
    who.require(Role.DECIDE);
    if (decisionId == null || decisionId.isEmpty() || decisionId.length() > MAX_DECISION_ID) {
      throw ApiException.badRequest("invalid_field", "decisionId is not a decision id", "decisionId");
    }
    // a decision id names its tenant: a key releases only its own tenants' decisions
    return engine.releaseDecision(decisionId, who::mayUse).exceptionally(DecisionService::storeError);
  }

  /**
   * A deferral the engine cannot honour ({@link Engine#requireDeferrable}) is the caller's error: 400
   * {@code defer_unsupported} naming {@code defer} (the store, or the rule that cannot book), or
   * {@code invalid_field} naming {@code notAfter}. A dry run books nothing and is not asked.
   */
  private void requireDeferrable(Message m) {
    try {
      engine.requireDeferrable(m);
    } catch (InvalidMessageException e) {
      throw ApiException.badRequest("defer".equals(e.field()) ? "defer_unsupported" : "invalid_field", e.getMessage(),
          e.field());
    }
  }

  /** A decision needs {@link Role#DECIDE}; an override also {@link Role#OVERRIDE}, asked by name. */
  private static void authorize(Principal who, Message m) {
    who.require(Role.DECIDE, m.tenant());
    if (m.override()) {
      who.require(Role.OVERRIDE, m.tenant(), "override");
    }
  }

  /** Releases the admitted decision of a message id, named by the message as it was decided. */
  public CompletableFuture<Boolean> releaseMessage(Principal who, Message m) {
    who.require(Role.DECIDE, m.tenant());
    if (m.messageId() == null) {
      throw ApiException.badRequest("missing_field", "messageId is required to release by message id", "messageId");
    }
    return engine.releaseMessage(m).exceptionally(DecisionService::storeError);
  }

  /** A recipient's counters and send windows, read in {@code timeZone} (null: the policy's, else UTC). */
  public CompletableFuture<Inspected> inspect(Principal who, String tenant, String recipient, ZoneId timeZone) {
    who.require(Role.READ, tenant);
    boolean degraded = failover.policyDecides();
    return engine.inspect(tenant, recipient, timeZone)
        .thenApply(i -> new Inspected(i, degraded || failover.policyDecides(), audit.recent().of(tenant, recipient)))
        .exceptionally(DecisionService::storeError);
  }

  /**
   * Forgets a recipient: counters, then recent denials. {@code offLoop} runs the erasure's part that may
   * rewrite the saved recent denials (a file forced to disk), so never on an event loop.
   */
  public CompletableFuture<Boolean> reset(Principal who, String tenant, String recipient, Executor offLoop) {
    who.require(Role.ADMIN, tenant);
    return engine.reset(tenant, recipient).thenApplyAsync(held -> {
      // an erasure request: the audit line names who reset, not whom
      audit.admin("reset", clock.millis(), tenant, null, 0, who.name(), null);
      forgetDenials(tenant, recipient);
      return held;
    }, offLoop).exceptionally(DecisionService::storeError);
  }

  /** Part of the erasure: a reset answers only once the recipient's denials are gone from memory and disk. */
  private void forgetDenials(String tenant, String recipient) {
    try {
      audit.recent().forget(tenant, recipient);
    } catch (UncheckedIOException e) {
      throw new ApiException(500, "erase_failed", "the counters are reset but the recipient's recent denials could "
          + "not be erased from the data directory (the server log says why); retry the reset", null);
    }
  }

  public CompletableFuture<Readiness> ready() {
    return failover.ready().thenApply(ok -> new Readiness(ok, failover.down(), failover.full(),
        failover.fullRetryAfterMs(), failover.resets(), failover.lastReset(), failover.resetUntil()));
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * A decision of the engine: counted as degraded when the node's own store made it, during an
   * outage or for a recipient the full store cannot hold. Only a probe declares an outage, and a
   * full store refuses only while up: a degraded decision with no outage in force before or after
   * it was made for a full store.
   */
  private Decision local(Message m, Decision d, long outagesBefore) {
    if (!d.degraded()) {
      return d;
    }
    metrics.degraded(m.tenant(), FailureAction.LOCAL.id());
    if (failover.resetUntil() > 0) {
      return d.degradedFor(Decision.STORE_RESET);
    }
    boolean outage = failover.down() || failover.outages() != outagesBefore;
    return d.degradedFor(outage ? Decision.STORE_DOWN : Decision.STORE_FULL);
  }

  private void recorded(Message m, Decision d, Principal who, boolean dryRun) {
    if (dryRun) {
      return;
    }
    metrics.decision(m.tenant(), d);
    audit.decision(m, d, who.name());
  }

  /** The failure policy's rule for a decision the store could not make (see the class comment). */
  private Decision fallback(Message m, Throwable error) {
    Throwable t = unwrap(error);
    boolean full = t instanceof StoreException se && se.reason() == StoreException.Reason.FULL;
    if (t instanceof FailoverStore.Down || full) {
      boolean allow = (full ? failure.actionWhenFull(m.category()) : failure.actionFor(m.category()))
          == FailureAction.ALLOW;
      metrics.degraded(m.tenant(), allow ? FailureAction.ALLOW.id() : FailureAction.DENY.id());
      long version = engine.policy(m.tenant()).map(Policy::version).orElse(0L);
      // a full store says when room can first free (-1: it cannot say); a store that lost its data, when
      // the failure policy stops deciding; an outage, the next probe
      long now = clock.millis();
      long resetUntil = t instanceof FailoverStore.Down down ? down.resetUntil() : 0;
      long retryAfter = allow ? 0 : full ? (t instanceof StoreException.Full f ? f.retryAfterMs() : -1)
          : resetUntil > 0 ? Math.max(1, resetUntil - now) : failure.probeInterval().toMillis();
      String reason = full ? Decision.STORE_FULL : resetUntil > 0 ? Decision.STORE_RESET : Decision.STORE_DOWN;
      return new Decision(allow, syntheticId(), retryAfter, List.of(), List.of(), List.of(), true, now, version, false,
          Decision.sendAtOf(allow, now, retryAfter)).degradedFor(reason);
    }
    return storeError(t);
  }

  /** Maps a store failure to the API's error; rethrows anything else (a bug: HTTP 500). */
  private static <T> T storeError(Throwable error) {
    Throwable t = unwrap(error);
    if (t instanceof StoreException se) {
      if (se.reason() == StoreException.Reason.TIMEOUT) {
        throw new ApiException(429, "store_busy", "the store is busy (" + se.getMessage() + "); nothing was "
            + "recorded: retry after the Retry-After delay", null);
      }
      throw new ApiException(503, "store_unavailable", se.getMessage() + "; retry later", null);
    }
    throw t instanceof RuntimeException re ? re : new CompletionException(t);
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static String syntheticId() {
    byte[] b = new byte[12];
    ThreadLocalRandom.current().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
