package dev.fcap.server.admin;

import java.io.IOException;

/**
 * Thrown by {@link RulesSource#save} when the stored rules changed since this node read them (another
 * node saved first): nothing was written, and the admin API answers 409 so the caller rereads and
 * reapplies. A shared source (Redis) uses it to make concurrent edits from the same version safe.
 */
public final class RulesConflictException extends IOException {
  private static final long serialVersionUID = 1L;

  public RulesConflictException(String message) {
    super(message);
  }
}
