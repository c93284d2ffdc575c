package dev.fcap.spring;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * {@code fcap} in Actuator's health: UP when decisions are made normally (client mode: the server's
 * {@code /ready}, one attempt), DOWN when the server or its store is away (decisions then come from
 * the fallback, or fail).
 */
final class FcapHealthIndicator extends AbstractHealthIndicator {
  private final Fcap fcap;
  private final String where;

  FcapHealthIndicator(Fcap fcap, String where) {
    super("fcap health check failed");
    this.fcap = fcap;
    this.where = where;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    builder.withDetail("mode", fcap.mode());
    if (where != null) {
      builder.withDetail("url", where);
    }
    if (fcap.ready()) {
      builder.up();
    } else {
      builder.down();
    }
  }
}
