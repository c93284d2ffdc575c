package dev.fcap.spring;

import dev.fcap.client.Decision;
import dev.fcap.client.Message;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Micrometer metrics of the application's decisions: {@code fcap.decisions{outcome, mode}} with outcome
 * {@code allowed}, {@code denied}, {@code deferred} (booked for later), {@code fallback_allowed} or
 * {@code fallback_denied}, and the latency {@code fcap.decision.latency{mode}}. Checks are not counted
 * (they change nothing).
 */
final class MeteredFcap implements Fcap, AutoCloseable {
  private final Fcap delegate;
  private final Timer latency;
  private final Counter allowed;
  private final Counter denied;
  private final Counter deferred;
  private final Counter fallbackAllowed;
  private final Counter fallbackDenied;

  MeteredFcap(Fcap delegate, MeterRegistry registry) {
    this.delegate = delegate;
    this.latency = Timer.builder("fcap.decision.latency").description("time to decide a message, retries included")
        .tag("mode", delegate.mode()).register(registry);
    this.allowed = counter(registry, "allowed");
    this.denied = counter(registry, "denied");
    this.deferred = counter(registry, "deferred");
    this.fallbackAllowed = counter(registry, "fallback_allowed");
    this.fallbackDenied = counter(registry, "fallback_denied");
  }

  private Counter counter(MeterRegistry registry, String outcome) {
    return Counter.builder("fcap.decisions").description("decisions of this application's messages by outcome")
        .tag("outcome", outcome).tag("mode", delegate.mode()).register(registry);
  }

  @Override
  public Decision decide(Message message) {
    Decision d = latency.record(() -> delegate.decide(message));
    (d.fallback() ? d.allowed() ? fallbackAllowed : fallbackDenied
        : d.allowed() ? allowed : d.deferred() ? deferred : denied).increment();
    return d;
  }

  @Override
  public Decision check(Message message) {
    return delegate.check(message);
  }

  @Override
  public boolean release(String decisionId) {
    return delegate.release(decisionId);
  }

  @Override
  public boolean ready() {
    return delegate.ready();
  }

  @Override
  public String mode() {
    return delegate.mode();
  }

  @Override
  public void close() throws Exception {
    if (delegate instanceof AutoCloseable c) {
      c.close();
    }
  }
}
