package dev.fcap.model;

import java.util.List;

/**
 * The answer for one message.
 *
 * @param allowed true iff every applicable enforced rule admitted it (it was then recorded in every
 *     applicable rule, shadow ones included)
 * @param decisionId identifies the decision for {@code release} and audit
 * @param retryAfterMs 0 when allowed; otherwise the earliest delay after which every enforced rule
 *     would admit the same message if nothing else were sent; {@code -1} if that never happens
 * @param blockedBy the enforced rules that refused it
 * @param shadowBlockedBy the shadow rules that would have refused it
 * @param rules one outcome per applicable rule, in policy order
 * @param degraded true when decided by the failure policy instead of the store
 * @param time the store clock at the decision, epoch milliseconds
 * @param replayed true when the message id was decided before: this is that admitted decision again
 *     (its id, time and counts), and nothing was recorded now
 */
public record Decision(
    boolean allowed,
    String decisionId,
    long retryAfterMs,
    List<String> blockedBy,
    List<String> shadowBlockedBy,
    List<RuleOutcome> rules,
    boolean degraded,
    long time,
    long policyVersion,
    boolean replayed) {

  public Decision {
    blockedBy = List.copyOf(blockedBy);
    shadowBlockedBy = List.copyOf(shadowBlockedBy);
    rules = List.copyOf(rules);
  }

  public Decision(boolean allowed, String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time, long policyVersion) {
    this(allowed, decisionId, retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, time, policyVersion, false);
  }
}
