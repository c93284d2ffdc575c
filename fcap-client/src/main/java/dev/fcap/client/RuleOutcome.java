package dev.fcap.client;

/**
 * What one rule said about a message.
 *
 * @param used cost units counted in the rule's window before this message
 * @param remaining {@code limit - used}, never negative
 * @param retryAfterMs 0 when allowed; otherwise when this rule alone would admit the same message
 *     again; -1 if never
 * @param sendAt 0 when allowed; otherwise the earliest instant (epoch ms) at which this rule alone would
 *     admit the same message; -1 if never
 * @param bound the count the message's priority let it bring the rule to: the limit less the rule's
 *     headroom for that priority (the limit when the rule keeps none)
 */
public record RuleOutcome(String id, long limit, long windowMs, long used, long remaining, boolean allowed,
    boolean enforced, long retryAfterMs, long sendAt, long bound) {}
