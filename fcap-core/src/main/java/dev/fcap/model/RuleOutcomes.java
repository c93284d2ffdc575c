package dev.fcap.model;

import java.util.AbstractList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * The outcomes of a decision's rules kept as numbers, a {@link RuleOutcome} made only when one is
 * read: what a rule says beyond its count and its delay (its id, limit, window, bound and whether it
 * was enforced) follows from the rule and the message, which every outcome of the decision shares.
 * An admitting outcome is one number (the units used before the message: it has no delay); a
 * refusing one adds its delay and its instant, so a decision allocates one short array for its rules
 * instead of an object each, and an admitted decision the shortest.
 *
 * <p>Filled by {@link #add} in rule order, then immutable once a {@link Decision} holds it (or
 * {@link #seal()} was called): {@code add} then fails, so a decision's outcomes never change.
 */
public final class RuleOutcomes extends AbstractList<RuleOutcome> implements RandomAccess {
  private final List<Rule> rules;
  private final Message message;
  /**
   * Per outcome the units used before the message (its complement, negative, when the rule refused
   * it); after them, per refusing outcome in order, the delay to retry after and the instant to send at.
   */
  private final long[] values;
  private int size;
  private int refusals;
  private boolean sealed;

  /**
   * An empty list for the outcomes of {@code rules} (in that order) on {@code message}, of which
   * {@code refused} will refuse.
   *
   * @param rules the rules the outcomes are of, outcome {@code i} being of rule {@code i}; an
   *     immutable list is kept as it is, any other copied
   * @throws IllegalArgumentException if {@code refused} is negative or more than the rules
   */
  public RuleOutcomes(List<Rule> rules, Message message, int refused) {
    this.rules = List.copyOf(rules);
    this.message = Objects.requireNonNull(message, "message");
    if (refused < 0 || refused > this.rules.size()) {
      throw new IllegalArgumentException("refused must be 0 to " + this.rules.size() + ", got " + refused);
    }
    this.values = new long[this.rules.size() + 2 * refused];
  }

  /**
   * Appends the outcome of the next rule, as {@link RuleOutcome} states its parts.
   *
   * @throws IllegalArgumentException if {@code used} is negative, or an admitting outcome has a delay
   *     or an instant to send at
   * @throws IllegalStateException once sealed, past the last rule, or past the refusals announced
   */
  public RuleOutcomes add(boolean allowed, long used, long retryAfterMs, long sendAt) {
    if (used < 0) {
      throw new IllegalArgumentException("used must not be negative, got " + used);
    }
    if (allowed && (retryAfterMs != 0 || sendAt != 0)) {
      throw new IllegalArgumentException("an admitting outcome has no delay and no instant to send at");
    }
    if (sealed || size == rules.size()) {
      throw new IllegalStateException(sealed ? "the outcomes are sealed" : "one outcome per rule");
    }
    if (!allowed) {
      int at = rules.size() + 2 * refusals;
      if (at == values.length) {
        throw new IllegalStateException("more refusals than the " + refusals + " announced");
      }
      values[at] = retryAfterMs;
      values[at + 1] = sendAt;
      refusals++;
    }
    values[size++] = allowed ? used : ~used;
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
    long stored = values[index];
    boolean allowed = stored >= 0;
    long used = allowed ? stored : ~stored;
    long retryAfterMs = 0;
    long sendAt = 0;
    if (!allowed) {
      int at = rules.size();
      for (int i = 0; i < index; i++) {
        at += values[i] < 0 ? 2 : 0;
      }
      retryAfterMs = values[at];
      sendAt = values[at + 1];
    }
    return new RuleOutcome(rule.id(), rule.limit(), rule.windowMs(), used, Math.max(0, rule.limit() - used),
        allowed, rule.enforcedFor(message), retryAfterMs, sendAt, rule.boundFor(message.priority()));
  }

  @Override
  public int size() {
    return size;
  }
}
