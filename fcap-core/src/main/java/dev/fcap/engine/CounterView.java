package dev.fcap.engine;

import java.util.Map;

/**
 * One counter of a recipient as {@code inspect} shows it.
 *
 * @param values the counter's key values besides the recipient (content as its fingerprint in hex)
 * @param used cost counted in the window now
 * @param freesInMs 0 if one more message would pass now; otherwise when it would (ms from now);
 *     -1 if never
 */
public record CounterView(
    String ruleId,
    long limit,
    long windowMs,
    boolean enforced,
    Map<String, String> values,
    long used,
    long remaining,
    long freesInMs) {}
