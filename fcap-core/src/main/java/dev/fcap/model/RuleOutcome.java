package dev.fcap.model;

/**
 * What one rule said about a message.
 *
 * @param used cost units counted in the rule's window before this message
 * @param remaining {@code limit - used}, never negative
 * @param retryAfterMs 0 when allowed; otherwise how long until this rule alone would admit the same
 *     message if nothing else were sent; {@code -1} if it never will (cost above the limit)
 * @param sendAt 0 when allowed; otherwise the earliest instant (epoch milliseconds) at which this rule
 *     alone would admit the same message if nothing else were sent; {@code -1} if it never will
 * @param bound the count this message was allowed to reach: {@code limit} less the headroom its
 *     priority leaves ({@link Headroom}); {@code limit} without headroom, 0 for a send window
 */
public record RuleOutcome(
    String id,
    long limit,
    long windowMs,
    long used,
    long remaining,
    boolean allowed,
    boolean enforced,
    long retryAfterMs,
    long sendAt,
    long bound) {

  /** An outcome whose bound is its limit (no headroom). */
  public RuleOutcome(String id, long limit, long windowMs, long used, long remaining, boolean allowed,
      boolean enforced, long retryAfterMs, long sendAt) {
    this(id, limit, windowMs, used, remaining, allowed, enforced, retryAfterMs, sendAt, limit);
  }
}
