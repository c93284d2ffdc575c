package dev.fcap.client;

import java.util.List;

/**
 * The answer for one message: the server's decision, or the client's {@link Fallback} when the
 * server could not be reached ({@link #fallback()} true, {@link #fallbackReason()} says why).
 *
 * @param allowed send it
 * @param decisionId the server's id, for {@link FcapClient#release}; null for a fallback decision
 * @param retryAfterMs 0 when allowed; otherwise the earliest delay after which every enforced rule
 *     would admit the same message; -1 if never
 * @param blockedBy the enforced rules that refused it
 * @param shadowBlockedBy the shadow rules that would have refused it
 * @param rules one outcome per applicable rule; empty for a fallback decision
 * @param degraded decided by a failure policy (the server's, or this client's fallback)
 * @param replayed the server had decided this messageId before: this is that first decision again, and
 *     nothing was recorded this time (a retry)
 * @param policyVersion the version of the tenant's policy that decided; -1 for a fallback decision
 * @param time the store clock at the decision (epoch ms); the client's clock for a fallback decision
 * @param messageId the id sent for this message (the caller's, or the one the client generated)
 * @param fallback true when the client decided because the server was unreachable
 * @param fallbackReason why the server could not be asked; null unless {@code fallback}
 * @param sendAt 0 when allowed; otherwise the earliest instant (epoch ms) at which every enforced rule
 *     would admit the same message if nothing else were sent, by the recipient's clock for send
 *     windows; -1 if never
 * @param suppressedReason null unless the recipient is on the tenant's suppression list for this message
 *     ({@code blockedBy} then starts with {@code suppressed}): the entry's reason
 * @param deferred the message asked to be deferred ({@link Message#defer()}) and the server booked it for
 *     {@code sendAt}: {@code allowed} is false; send it at {@code sendAt}, or release {@code decisionId} to
 *     give the slot back. Never for a fallback decision
 */
public record Decision(boolean allowed, String decisionId, long retryAfterMs, List<String> blockedBy,
    List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, boolean replayed, long policyVersion,
    long time,
    String messageId, boolean fallback, String fallbackReason, long sendAt, String suppressedReason,
    boolean deferred) {

  public Decision {
    blockedBy = List.copyOf(blockedBy);
    shadowBlockedBy = List.copyOf(shadowBlockedBy);
    rules = List.copyOf(rules);
  }

  /** A decision that was not deferred. */
  public Decision(boolean allowed, String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, boolean replayed, long policyVersion,
      long time, String messageId, boolean fallback, String fallbackReason, long sendAt, String suppressedReason) {
    this(allowed, decisionId, retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, replayed, policyVersion, time,
        messageId, fallback, fallbackReason, sendAt, suppressedReason, false);
  }

  /** A decision of no suppression. */
  public Decision(boolean allowed, String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, boolean replayed, long policyVersion,
      long time, String messageId, boolean fallback, String fallbackReason, long sendAt) {
    this(allowed, decisionId, retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, replayed, policyVersion, time,
        messageId, fallback, fallbackReason, sendAt, null);
  }

  /** A decision whose {@code sendAt} is {@code time} plus the delay to retry after. */
  public Decision(boolean allowed, String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, boolean replayed, long policyVersion,
      long time, String messageId, boolean fallback, String fallbackReason) {
    this(allowed, decisionId, retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, replayed, policyVersion, time,
        messageId, fallback, fallbackReason, allowed ? 0 : retryAfterMs < 0 ? -1 : time + retryAfterMs);
  }

  /** A decision made by the client for {@code message} because the server could not be asked. */
  public static Decision fallback(boolean allowed, Message message, long retryAfterMs, String reason) {
    return new Decision(allowed, null, allowed ? 0 : retryAfterMs, List.of(), List.of(), List.of(), true, false, -1,
        System.currentTimeMillis(), message.messageId(), true, reason);
  }
}
