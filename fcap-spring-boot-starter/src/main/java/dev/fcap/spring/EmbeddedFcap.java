package dev.fcap.spring;

import dev.fcap.client.Decision;
import dev.fcap.client.Message;
import dev.fcap.client.RuleOutcome;
import dev.fcap.engine.Engine;
import dev.fcap.model.Policy;
import dev.fcap.store.memory.MemoryStore;
import java.util.List;

/**
 * Decisions in the application's own JVM: fcap-core's {@link Engine} on a {@link MemoryStore}.
 * Counters are per instance and live as long as the application: for one instance, or for caps
 * that may be per instance; several instances sharing caps need a server on Redis ({@code fcap.url}).
 */
final class EmbeddedFcap implements Fcap, AutoCloseable {
  private final Engine engine;

  EmbeddedFcap(List<Policy> policies) {
    MemoryStore store = MemoryStore.builder().build();
    this.engine = Engine.builder(store).clock(store::now).policies(policies).build();
  }

  Engine engine() {
    return engine;
  }

  @Override
  public Decision decide(Message message) {
    // a deferral the store or rules cannot honour fails here, naming defer or notAfter, not inside a future
    return convert(engine.decideNow(core(message)), message);
  }

  @Override
  public Decision check(Message message) {
    return convert(engine.check(core(message)).join(), message);
  }

  @Override
  public boolean release(String decisionId) {
    return engine.release(decisionId).join();
  }

  @Override
  public boolean ready() {
    return true;
  }

  @Override
  public String mode() {
    return "embedded";
  }

  @Override
  public void close() {
    engine.close();
  }

  private static dev.fcap.model.Message core(Message m) {
    dev.fcap.model.Message.Builder b = dev.fcap.model.Message.builder(m.recipient()).channel(m.channel())
        .sender(m.sender()).category(m.category()).content(m.content()).contentKey(m.contentKey())
        .attributes(m.attributes()).cost(m.cost()).messageId(m.messageId()).timeZone(m.timeZone())
        .priority(m.priority() == null ? null : dev.fcap.model.Priority.valueOf(m.priority().name()))
        .override(m.override()).defer(defer(m.defer()));
    if (m.tenant() != null) {
      b.tenant(m.tenant());
    }
    return b.build();
  }

  private static dev.fcap.model.Defer defer(dev.fcap.client.Defer d) {
    return d == null ? null : d.notAfter() == null ? dev.fcap.model.Defer.BY_DEFAULT
        : dev.fcap.model.Defer.until(d.notAfter());
  }

  private static Decision convert(dev.fcap.model.Decision d, Message m) {
    List<RuleOutcome> rules = d.rules().stream().map(r -> new RuleOutcome(r.id(), r.limit(), r.windowMs(), r.used(),
        r.remaining(), r.allowed(), r.enforced(), r.retryAfterMs(), r.sendAt(), r.bound())).toList();
    return new Decision(d.allowed(), d.decisionId(), d.retryAfterMs(), d.blockedBy(), d.shadowBlockedBy(), rules,
        d.degraded(), d.replayed(), d.policyVersion(), d.time(), m.messageId(), false, null, d.sendAt(),
        d.suppressedReason(), d.deferred());
  }
}
