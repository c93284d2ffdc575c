package dev.fcap.store;

import dev.fcap.model.Dimension;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import java.time.Duration;
import java.util.List;

/**
 * The seed policy ({@code examples/rules.yaml}, the server's built-in seed) as Java values, declared
 * once for every test and benchmark that decides it in code: 15 per minute and 50 per 24 h per
 * recipient, 2 per 59 s and 5 per 59 min of identical content. {@code SeedRulesTest} fails if this and
 * the file drift apart.
 */
public final class SeedRules {
  public static final Rule PER_MINUTE = Rule.of("recipient-per-minute", 15, Duration.ofMinutes(1), Dimension.RECIPIENT);
  public static final Rule PER_DAY = Rule.of("recipient-per-day", 50, Duration.ofHours(24), Dimension.RECIPIENT);
  public static final Rule SAME_CONTENT_59S =
      Rule.of("same-content-per-59s", 2, Duration.ofSeconds(59), Dimension.RECIPIENT, Dimension.CONTENT);
  public static final Rule SAME_CONTENT_59M =
      Rule.of("same-content-per-59m", 5, Duration.ofMinutes(59), Dimension.RECIPIENT, Dimension.CONTENT);
  /** The whole seed, tenant {@code default}, version 1. */
  public static final Policy POLICY =
      new Policy("default", 1, List.of(PER_MINUTE, PER_DAY, SAME_CONTENT_59S, SAME_CONTENT_59M));
  /** Its two recipient rules alone (no content fingerprint). */
  public static final Policy RECIPIENT_RULES = new Policy("default", 1, List.of(PER_MINUTE, PER_DAY));

  private SeedRules() {}
}
