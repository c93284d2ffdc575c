package dev.fcap.server.failure;

import dev.fcap.engine.Engine;
import dev.fcap.engine.Inspection;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.server.metrics.ServerMetrics;
import dev.fcap.store.Clock;
import dev.fcap.store.StoreException;
import dev.fcap.store.memory.MemoryStore;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine the server decides with: the primary {@link Engine} on the configured store, guarded by
 * the {@link FailurePolicy}.
 *
 * <p><b>Design.</b> Every store call is bounded by {@code timeout}: the caller never waits longer.
 * A failure is classified by {@link StoreException.Reason}. An <em>outage</em> (a timeout, an
 * unreachable store) marks the store down: from then on decisions go straight to the failure policy
 * without trying the store, so an outage costs callers nothing in latency, and a probe reads the store
 * every {@code probeInterval}; the first probe that succeeds marks it up again (automatic recovery).
 * A <em>per-request</em> failure (the store is full, a script error) falls back for that request only.
 *
 * <p>The fallback depends on the message's category: {@code local} decides on an in-process
 * {@link MemoryStore} created fresh at the start of each outage (so the rules keep holding, at least
 * per node, while the shared store is gone), {@code allow} admits and {@code deny} refuses. Every
 * fallback decision is marked {@code degraded}. What the local store counted is dropped when the
 * outage ends: the shared store never saw it, and merging would need a consensus the store does not
 * offer; a recipient may therefore receive up to one extra window's worth around an outage.
 */
public final class FailoverEngine implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FailoverEngine.class);
  private static final byte[] PROBE_PARTITION = {'f', 'c', 'a', 'p', ':', 'p', 'r', 'o', 'b', 'e'};
  private final Engine primary;
  private final FailurePolicy policy;
  private final Clock clock;
  private final ServerMetrics metrics;
  private final long timeoutMs;
  private final ScheduledFuture<?> prober;
  private volatile Engine local;
  private volatile boolean down;
  private volatile long downSince;

  public FailoverEngine(Engine primary, FailurePolicy policy, Clock clock, ServerMetrics metrics,
      ScheduledExecutorService scheduler) {
    this.primary = primary;
    this.policy = policy;
    this.clock = clock;
    this.metrics = metrics;
    this.timeoutMs = policy.timeout().toMillis();
    this.local = newLocal();
    long every = policy.probeInterval().toMillis();
    this.prober = scheduler.scheduleWithFixedDelay(this::probeIfDown, every, every, TimeUnit.MILLISECONDS);
    metrics.gauge("fcap_store_up", "1 while the store answers, 0 during an outage (failure policy in force)", this,
        f -> f.down ? 0 : 1);
  }

  public Engine primary() {
    return primary;
  }

  /** True during an outage: decisions are answered by the failure policy. */
  public boolean storeDown() {
    return down;
  }

  public synchronized void setPolicy(Policy p) {
    primary.setPolicy(p);
    local.setPolicy(p);
  }

  public synchronized void setPolicies(List<Policy> policies) {
    primary.setPolicies(policies);
    local.setPolicies(policies);
  }

  /** Decides (or checks, with {@code dryRun}) one message; never waits past the timeout. */
  public CompletableFuture<Decision> decide(Message m, boolean dryRun) {
    if (down) {
      return fallback(m, dryRun);
    }
    return guarded(() -> dryRun ? primary.check(m) : primary.decide(m))
        .handle((d, error) -> error == null ? CompletableFuture.completedFuture(d) : onFailure(error, m, dryRun))
        .thenCompose(f -> f);
  }

  /** Decides many messages; on a store failure each falls back on its own category's action. */
  public CompletableFuture<List<Decision>> decideAll(List<Message> messages, boolean dryRun) {
    if (down) {
      return fallbackAll(messages, dryRun);
    }
    return guarded(() -> primary.decideAll(messages, dryRun)).handle((list, error) -> {
      if (error == null) {
        return CompletableFuture.completedFuture(list);
      }
      classify(error);
      return fallbackAll(messages, dryRun);
    }).thenCompose(f -> f);
  }

  /** Releases a decision of the store or, for a degraded one, of the outage store. */
  public CompletableFuture<Boolean> release(String decisionId) {
    Engine outage = local;
    CompletableFuture<Boolean> viaLocal = outage.release(decisionId);
    return viaLocal.thenCompose(released -> released ? CompletableFuture.completedFuture(true)
        : down ? CompletableFuture.failedFuture(unavailable()) : guarded(() -> primary.release(decisionId))
            .exceptionally(error -> {
              classify(error);
              throw new CompletionException(unavailable());
            }));
  }

  /** Releases by message id on the store; during an outage the store cannot be reached, so it fails. */
  public CompletableFuture<Boolean> releaseMessage(Message message) {
    return down ? CompletableFuture.failedFuture(unavailable()) : guarded(() -> primary.releaseMessage(message))
        .exceptionally(error -> {
          classify(error);
          throw new CompletionException(unavailable());
        });
  }

  /** A recipient's counters; during an outage those of the outage store, marked degraded. */
  public CompletableFuture<Result<Inspection>> inspect(String tenant, String recipient) {
    if (down) {
      return local.inspect(tenant, recipient).thenApply(i -> new Result<>(i, true));
    }
    return guarded(() -> primary.inspect(tenant, recipient)).handle((i, error) -> {
      if (error == null) {
        return CompletableFuture.completedFuture(new Result<>(i, false));
      }
      classify(error);
      return local.inspect(tenant, recipient).thenApply(x -> new Result<>(x, true));
    }).thenCompose(f -> f);
  }

  /** Forgets a recipient in the store (and the outage store); fails with an unavailable store. */
  public CompletableFuture<Boolean> reset(String tenant, String recipient) {
    CompletableFuture<Boolean> inLocal = local.reset(tenant, recipient);
    if (down) {
      return CompletableFuture.failedFuture(unavailable());
    }
    return guarded(() -> primary.reset(tenant, recipient)).thenCombine(inLocal, (a, b) -> a || b)
        .exceptionally(error -> {
          classify(error);
          throw new CompletionException(unavailable());
        });
  }

  /** Whether the store answers a read within the timeout (for {@code /ready}). */
  public CompletableFuture<Boolean> ready() {
    return guarded(() -> primary.store().read(PROBE_PARTITION)).handle((s, error) -> error == null);
  }

  /** A value and whether it came from the failure policy. */
  public record Result<T>(T value, boolean degraded) {}

  // ---------------------------------------------------------------------------------------------

  private <T> CompletableFuture<T> guarded(Supplier<CompletableFuture<T>> call) {
    try {
      return call.get().copy().orTimeout(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private CompletableFuture<Decision> onFailure(Throwable error, Message m, boolean dryRun) {
    classify(error);
    return fallback(m, dryRun);
  }

  /** Marks the store down on an outage; rethrows what is not a store failure at all (a bug). */
  private void classify(Throwable error) {
    Throwable cause = unwrap(error);
    StoreException.Reason reason = cause instanceof TimeoutException ? StoreException.Reason.TIMEOUT
        : cause instanceof StoreException se ? se.reason() : null;
    if (reason == null) {
      throw cause instanceof RuntimeException re ? re : new CompletionException(cause);
    }
    if (reason == StoreException.Reason.TIMEOUT || reason == StoreException.Reason.UNAVAILABLE) {
      markDown(reason, cause);
    }
  }

  private synchronized void markDown(StoreException.Reason reason, Throwable cause) {
    if (down) {
      return;
    }
    local.close();
    Engine fresh = newLocal();
    fresh.setPolicies(primary.policies());
    local = fresh;
    downSince = clock.millis();
    down = true;
    LOG.warn("store outage ({}: {}); the failure policy decides until the store answers again (probe every {} ms)",
        reason, cause.getMessage(), policy.probeInterval().toMillis());
  }

  private void probeIfDown() {
    if (!down) {
      return;
    }
    try {
      guarded(() -> primary.store().read(PROBE_PARTITION)).get();
      down = false;
      LOG.info("store recovered after {} ms; decisions use the store again", clock.millis() - downSince);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | RuntimeException e) {
      LOG.debug("store still down: {}", e.toString());
    }
  }

  private Engine newLocal() {
    Engine e = Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock).build();
    e.setPolicies(primary.policies());
    return e;
  }

  private CompletableFuture<Decision> fallback(Message m, boolean dryRun) {
    FailureAction action = policy.actionFor(m.category());
    metrics.degraded(m.tenant(), action.id());
    long version = primary.policy(m.tenant()).map(Policy::version).orElse(0L);
    return switch (action) {
      case LOCAL -> (dryRun ? local.check(m) : local.decide(m)).thenApply(FailoverEngine::markDegraded);
      case ALLOW -> CompletableFuture.completedFuture(new Decision(true, syntheticId(), 0, List.of(), List.of(),
          List.of(), true, clock.millis(), version));
      case DENY -> CompletableFuture.completedFuture(new Decision(false, syntheticId(),
          policy.probeInterval().toMillis(), List.of(), List.of(), List.of(), true, clock.millis(), version));
    };
  }

  private CompletableFuture<List<Decision>> fallbackAll(List<Message> messages, boolean dryRun) {
    List<CompletableFuture<Decision>> out = new ArrayList<>(messages.size());
    for (Message m : messages) {
      out.add(fallback(m, dryRun));
    }
    return CompletableFuture.allOf(out.toArray(CompletableFuture[]::new))
        .thenApply(ignored -> out.stream().map(CompletableFuture::join).toList());
  }

  private static Decision markDegraded(Decision d) {
    return new Decision(d.allowed(), d.decisionId(), d.retryAfterMs(), d.blockedBy(), d.shadowBlockedBy(), d.rules(),
        true, d.time(), d.policyVersion());
  }

  private static String syntheticId() {
    byte[] b = new byte[12];
    ThreadLocalRandom.current().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  private static StoreException unavailable() {
    return new StoreException(StoreException.Reason.UNAVAILABLE, "the store is unavailable; try again later");
  }

  static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  @Override
  public void close() {
    prober.cancel(false);
    local.close();
    primary.close();
  }
}
