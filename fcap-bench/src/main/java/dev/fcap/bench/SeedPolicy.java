package dev.fcap.bench;

import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.SeedRules;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * The seed policy ({@code examples/rules.yaml}, packaged as a resource) and its four limits, which
 * the peers are configured with: the limits are those of {@link SeedRules}, the one declaration of the
 * seed in code. {@link #load()} fails if the file and these disagree.
 */
final class SeedPolicy {
  static final int PER_MINUTE = (int) SeedRules.PER_MINUTE.limit();
  static final Duration MINUTE = SeedRules.PER_MINUTE.window();
  static final int PER_DAY = (int) SeedRules.PER_DAY.limit();
  static final Duration DAY = SeedRules.PER_DAY.window();
  static final int SAME_CONTENT_59S = (int) SeedRules.SAME_CONTENT_59S.limit();
  static final Duration S59 = SeedRules.SAME_CONTENT_59S.window();
  static final int SAME_CONTENT_59M = (int) SeedRules.SAME_CONTENT_59M.limit();
  static final Duration M59 = SeedRules.SAME_CONTENT_59M.window();

  private SeedPolicy() {}

  static List<Policy> load() {
    try (InputStream in = SeedPolicy.class.getResourceAsStream("/seed/rules.yaml")) {
      if (in == null) {
        throw new IllegalStateException("seed/rules.yaml missing from the benchmark jar");
      }
      List<Policy> policies = PolicyParser.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      check(policies);
      return policies;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void check(List<Policy> policies) {
    List<Rule> rules = policies.get(0).rules();
    expect(rules.get(0), PER_MINUTE, MINUTE);
    expect(rules.get(1), PER_DAY, DAY);
    expect(rules.get(2), SAME_CONTENT_59S, S59);
    expect(rules.get(3), SAME_CONTENT_59M, M59);
  }

  private static void expect(Rule r, long limit, Duration window) {
    if (r.limit() != limit || r.windowMs() != window.toMillis()) {
      throw new IllegalStateException("examples/rules.yaml changed (" + r.id() + "); update SeedRules (fcap-core test kit)");
    }
  }
}
