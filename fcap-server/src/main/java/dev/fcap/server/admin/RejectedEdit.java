package dev.fcap.server.admin;

import dev.fcap.policy.PolicyError;
import java.util.List;

/**
 * A change of the rules source that was refused (a hand edit of the rules file that does not parse):
 * the rules in force stay, and this is shown in {@code GET /v1/rules} and {@code /metrics} until the
 * source holds valid rules again.
 *
 * @param time when it was refused (the server's clock)
 * @param errors every error, naming tenant, rule and field where known
 */
public record RejectedEdit(long time, List<PolicyError> errors) {
  public RejectedEdit {
    errors = List.copyOf(errors);
  }
}
