package dev.fcap.server.failure;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * How the server decides when the store fails.
 *
 * @param timeout the longest a caller waits for the store; past it the failure policy answers
 * @param defaultAction for categories not listed
 * @param categories per message category; {@code transactional} is {@code allow} unless configured
 * @param probeInterval how often a failed store is probed for recovery
 */
public record FailurePolicy(Duration timeout, FailureAction defaultAction, Map<String, FailureAction> categories,
    Duration probeInterval) {

  public static final String TRANSACTIONAL = "transactional";

  public FailurePolicy {
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(defaultAction, "defaultAction");
    Objects.requireNonNull(probeInterval, "probeInterval");
    java.util.HashMap<String, FailureAction> c = new java.util.HashMap<>(categories);
    c.putIfAbsent(TRANSACTIONAL, FailureAction.ALLOW);
    categories = Map.copyOf(c);
  }

  public static FailurePolicy defaults() {
    return new FailurePolicy(Duration.ofMillis(100), FailureAction.LOCAL, Map.of(), Duration.ofSeconds(1));
  }

  /** The action for a message of {@code category} (null: no category). */
  public FailureAction actionFor(String category) {
    return category == null ? defaultAction : categories.getOrDefault(category, defaultAction);
  }
}
