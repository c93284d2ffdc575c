package dev.fcap.server.auth;

import java.util.Locale;
import java.util.Optional;

/**
 * What an API key may do. Roles do not imply each other, but for {@code admin}, which includes
 * {@code suppress}: give a key every role it needs.
 */
public enum Role {
  /** Decide, check, batch and release. */
  DECIDE,
  /** Inspect recipients, read rules, history and metrics of its tenants. */
  READ,
  /** Change rules and reset recipients; read and change the suppression lists. */
  ADMIN,
  /** Read and change the suppression lists (recipients that must receive nothing). */
  SUPPRESS,
  /**
   * Send a message with {@code "override": true}: every rule counts it and none refuses it. Apart
   * from {@link #DECIDE} and {@link #ADMIN} on purpose: an override can put a recipient past every cap.
   */
  OVERRIDE;

  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Optional<Role> fromId(String id) {
    for (Role r : values()) {
      if (r.id().equals(id)) {
        return Optional.of(r);
      }
    }
    return Optional.empty();
  }
}
