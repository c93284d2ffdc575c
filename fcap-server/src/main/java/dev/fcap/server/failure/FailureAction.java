package dev.fcap.server.failure;

import java.util.Locale;
import java.util.Optional;

/** What a decision does when the store fails or does not answer in time. */
public enum FailureAction {
  /** Decide with an in-process store kept for the outage; the decision is marked degraded. */
  LOCAL,
  /** Admit (degraded); nothing is counted. */
  ALLOW,
  /** Refuse (degraded). */
  DENY;

  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Optional<FailureAction> fromId(String id) {
    for (FailureAction a : values()) {
      if (a.id().equals(id)) {
        return Optional.of(a);
      }
    }
    return Optional.empty();
  }
}
