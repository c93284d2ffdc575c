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
    long sendAt) {

  /** The {@code sendAt} of a refusal built without one: {@link Decision} derives it from the retry delay. */
  static final long UNSET = Long.MIN_VALUE;

  public RuleOutcome(String id, long limit, long windowMs, long used, long remaining, boolean allowed,
      boolean enforced, long retryAfterMs) {
    this(id, limit, windowMs, used, remaining, allowed, enforced, retryAfterMs, allowed ? 0 : UNSET);
  }
}
