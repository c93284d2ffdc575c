package dev.fcap.model;

import java.util.AbstractList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * The outcomes of a decision's rules kept as three numbers each, a {@link RuleOutcome} made only
 * when one is read: what a rule says beyond its count and its delay (its id, limit, window, bound
 * and whether it was enforced) follows from the rule and the message, which every outcome of the
 * decision shares. A caller that only asks whether a message may go allocates one array for its
 * rules instead of an object each.
 *
 * <p>Filled by {@link #add} in rule order, then immutable once a {@link Decision} holds it (or
 * {@link #seal()} was called): {@code add} then fails, so a decision's outcomes never change.
 */
public final class RuleOutcomes extends AbstractList<RuleOutcome> implements RandomAccess {
  private final List<Rule> rules;
  private final Message message;
  /**
   * Per outcome: the units used before the message (its complement, negative, when the rule refused
   * it), the delay to retry after, the instant to send at.
   */
  private final long[] values;
  private int size;
  private boolean sealed;

  /**
   * An empty list for the outcomes of {@code rules} (in that order) on {@code message}.
   *
   * @param rules the rules the outcomes are of, outcome {@code i} being of rule {@code i}; an
   *     immutable list is kept as it is, any other copied
   */
  public RuleOutcomes(List<Rule> rules, Message message) {
    this.rules = List.copyOf(rules);
    this.message = Objects.requireNonNull(message, "message");
    this.values = new long[3 * this.rules.size()];
  }

  /**
   * Appends the outcome of the next rule, as {@link RuleOutcome} states its parts.
   *
   * @throws IllegalArgumentException if {@code used} is negative
   * @throws IllegalStateException once sealed, or past the last rule
   */
  public RuleOutcomes add(boolean allowed, long used, long retryAfterMs, long sendAt) {
    if (used < 0) {
      throw new IllegalArgumentException("used must not be negative, got " + used);
    }
    if (sealed || size == rules.size()) {
      throw new IllegalStateException(sealed ? "the outcomes are sealed" : "one outcome per rule");
    }
    int at = 3 * size++;
    values[at] = allowed ? used : ~used;
    values[at + 1] = retryAfterMs;
    values[at + 2] = sendAt;
    return this;
  }

  /** This list, from now on immutable. */
  public RuleOutcomes seal() {
    sealed = true;
    return this;
  }

  @Override
  public RuleOutcome get(int index) {
    Objects.checkIndex(index, size);
    Rule rule = rules.get(index);
    long stored = values[3 * index];
    long used = stored < 0 ? ~stored : stored;
    return new RuleOutcome(rule.id(), rule.limit(), rule.windowMs(), used, Math.max(0, rule.limit() - used),
        stored >= 0, rule.enforcedFor(message), values[3 * index + 1], values[3 * index + 2],
        rule.boundFor(message.priority()));
  }

  @Override
  public int size() {
    return size;
  }
}
