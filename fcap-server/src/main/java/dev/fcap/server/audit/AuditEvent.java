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
 * @param deferred of a denial: the message was booked for {@code sendAt} instead (it counts there)
 * @param sendAt of a deferred denial: the instant it was booked for (epoch ms); otherwise 0
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
    List<RuleDiff> changes,
    boolean deferred,
    long sendAt) {

  /** An event that books nothing: every one but a deferred decision's. */
  public AuditEvent(String type, long time, String decisionId, String tenant, String recipient, String channel,
      String category, List<String> blockedBy, List<String> shadowBlockedBy, Map<String, long[]> counts,
      long policyVersion, boolean degraded, String who, String detail, List<RuleDiff> changes) {
    this(type, time, decisionId, tenant, recipient, channel, category, blockedBy, shadowBlockedBy, counts,
        policyVersion, degraded, who, detail, changes, false, 0);
  }

  /** A decision's event ({@code allowed} or {@code denied}); every other one is administration. */
  public boolean isDecision() {
    return "denied".equals(type) || "allowed".equals(type);
  }
}
