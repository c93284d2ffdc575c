package dev.fcap.server.audit;

import java.util.List;
import java.util.Map;

/**
 * One line of the audit trail.
 *
 * @param type {@code denied}, {@code allowed} (sampled), or {@code rules} (a rule change)
 * @param counts per rule id: used/limit as seen by the decision
 * @param who the API key name
 * @param detail of a decision, {@code override} for a message sent with {@code "override": true} (always
 *     recorded); of administration, what was done
 * @param changes of a rule change: each rule it changed, before and after (null for other events)
 */
public record AuditEvent(
    String type,
    long time,
    String decisionId,
    String tenant,
    String recipient,
    String channel,
    String category,
    List<String> blockedBy,
    List<String> shadowBlockedBy,
    Map<String, long[]> counts,
    long policyVersion,
    boolean degraded,
    String who,
    String detail,
    List<RuleDiff> changes) {

  /** A decision's event ({@code allowed} or {@code denied}); every other one is administration. */
  public boolean isDecision() {
    return "denied".equals(type) || "allowed".equals(type);
  }
}
