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
 * @param sendAt 0 when allowed; otherwise the earliest instant (epoch milliseconds) at or after
 *     {@code time} at which every enforced rule would admit the same message if nothing else were sent;
 *     {@code -1} if that never happens
 * @param degradedReason null unless {@code degraded}; then why the store did not decide:
 *     {@link #STORE_DOWN}, {@link #STORE_FULL} or {@link #STORE_RESET}
 * @param suppressedReason null unless the recipient is on the tenant's suppression list for this
 *     message ({@link Suppression#BLOCKED_BY} is then among {@code blockedBy}): the entry's reason
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
    boolean replayed,
    long sendAt,
    String degradedReason,
    String suppressedReason) {

  /** A degraded decision's reason: the store is down (an outage); the failure policy decided. */
  public static final String STORE_DOWN = "store_down";
  /** A degraded decision's reason: the embedded store is full and cannot hold a new partition. */
  public static final String STORE_FULL = "store_full";
  /**
   * A degraded decision's reason: the shared store lost its data (a Redis restarted empty) and the
   * failure policy decides until the longest window has passed ({@code failure.storeReset: policy}).
   */
  public static final String STORE_RESET = "store_reset";

  public Decision {
    blockedBy = List.copyOf(blockedBy);
    shadowBlockedBy = List.copyOf(shadowBlockedBy);
    rules = rules instanceof RuleOutcomes outcomes ? outcomes.seal() : List.copyOf(rules);
  }

  /** A decision with no degraded reason of its own. */
  public Decision(boolean allowed, String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time, long policyVersion,
      boolean replayed, long sendAt) {
    this(allowed, decisionId, retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, time, policyVersion, replayed,
        sendAt, null, null);
  }

  /** A decision with a degraded reason and no suppression. */
  public Decision(boolean allowed, String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time, long policyVersion,
      boolean replayed, long sendAt, String degradedReason) {
    this(allowed, decisionId, retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, time, policyVersion, replayed,
        sendAt, degradedReason, null);
  }

  /** This decision marked degraded for {@code reason}. */
  public Decision degradedFor(String reason) {
    return new Decision(allowed, decisionId, retryAfterMs, blockedBy, shadowBlockedBy, rules, true, time,
        policyVersion, replayed, sendAt, reason, suppressedReason);
  }

  /**
   * The instant to send at, from the delay to retry after: 0 when allowed, -1 when never, else
   * {@code time + retryAfterMs} (a decision no rule decided, such as the failure policy's).
   */
  public static long sendAtOf(boolean allowed, long time, long retryAfterMs) {
    if (allowed) {
      return 0;
    }
    return retryAfterMs < 0 ? -1 : time + retryAfterMs;
  }
}
