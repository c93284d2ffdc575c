package dev.fcap.server;

import dev.fcap.engine.Inspection;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.server.audit.AuditLog;
import dev.fcap.server.audit.RecentDenials;
import dev.fcap.server.auth.Principal;
import dev.fcap.server.failure.FailoverEngine;
import dev.fcap.server.metrics.ServerMetrics;
import dev.fcap.store.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What both APIs call once a request is authenticated and validated: decisions through the
 * {@link FailoverEngine}, then metrics and audit. Also remembers the tenant of recent admitted
 * decisions, so that a key can release only its own tenants' decisions.
 */
public final class DecisionService {
  private static final int OWNERS = 1 << 16;
  private final FailoverEngine engine;
  private final AuditLog audit;
  private final ServerMetrics metrics;
  private final Clock clock;
  private final AtomicReferenceArray<String[]> owners = new AtomicReferenceArray<>(OWNERS);

  public DecisionService(FailoverEngine engine, AuditLog audit, ServerMetrics metrics, Clock clock) {
    this.engine = engine;
    this.audit = audit;
    this.metrics = metrics;
    this.clock = clock;
  }

  public FailoverEngine engine() {
    return engine;
  }

  public CompletableFuture<Decision> decide(Message m, boolean dryRun, Principal who) {
    long start = System.nanoTime();
    return engine.decide(m, dryRun).whenComplete((d, error) -> {
      metrics.recordDecisionNanos(dryRun ? "check" : "decide", System.nanoTime() - start);
      if (d != null && !dryRun) {
        recorded(m, d, who);
      }
    });
  }

  public CompletableFuture<List<Decision>> decideAll(List<Message> messages, boolean dryRun, Principal who) {
    long start = System.nanoTime();
    return engine.decideAll(messages, dryRun).whenComplete((ds, error) -> {
      metrics.recordDecisionNanos("batch", System.nanoTime() - start);
      if (ds != null && !dryRun) {
        for (int i = 0; i < ds.size(); i++) {
          recorded(messages.get(i), ds.get(i), who);
        }
      }
    });
  }

  private void recorded(Message m, Decision d, Principal who) {
    metrics.decision(m.tenant(), d);
    audit.decision(m, d, who.name());
    if (d.allowed()) {
      owners.set(slot(d.decisionId()), new String[] {d.decisionId(), m.tenant()});
    }
  }

  /** Releases a decision the caller may see; false when unknown, denied, forgotten or of another tenant. */
  public CompletableFuture<Boolean> release(String decisionId, Principal who) {
    String[] owner = owners.get(slot(decisionId));
    String tenant = owner != null && owner[0].equals(decisionId) ? owner[1] : null;
    if (tenant == null ? !who.mayUse("*") : !who.mayUse(tenant)) {
      return CompletableFuture.completedFuture(false);
    }
    return engine.release(decisionId);
  }

  /** Releases the admitted decision of a message id; the caller has been checked for the message's tenant. */
  public CompletableFuture<Boolean> releaseMessage(Message m, Principal who) {
    return engine.releaseMessage(m);
  }

  public CompletableFuture<FailoverEngine.Result<Inspection>> inspect(String tenant, String recipient) {
    return engine.inspect(tenant, recipient);
  }

  public List<RecentDenials.Denial> recentDenials(String tenant, String recipient) {
    return audit.recent().of(tenant, recipient);
  }

  public CompletableFuture<Boolean> reset(String tenant, String recipient, Principal who) {
    return engine.reset(tenant, recipient).thenApply(held -> {
      audit.recent().forget(tenant, recipient);
      // an erasure request: the audit line names who reset, not whom
      audit.admin("reset", clock.millis(), tenant, null, 0, who.name(), null);
      return held;
    });
  }

  private static int slot(String decisionId) {
    return (decisionId.hashCode() * 0x9E3779B9) >>> 16 & (OWNERS - 1);
  }
}
