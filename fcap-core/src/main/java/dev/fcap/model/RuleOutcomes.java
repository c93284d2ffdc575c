package dev.fcap.model;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * The outcomes of a decision's rules kept as numbers, a {@link RuleOutcome} made only when one is
 * read: what a rule says beyond its count and its delay (its id, limit, window, bound and whether it
 * was enforced) follows from the rule and the message, which every outcome of the decision shares.
 * An admitting outcome is one int (the units used before the message: it has no delay); a refusing
 * one adds its delay and its instant, so a decision allocates one short array for its rules instead
 * of an object each, and an admitted decision the shortest (the seed policy's: 4 ints).
 *
 * <p>Filled by {@link #add} in rule order, then immutable once sealed ({@link #seal()}): {@code add}
 * then fails. A {@link Decision} made from a full list seals it and keeps its parts, not the list
 * (its {@code rules()} reads them back as a list of its own), so a thread can {@link #refill} one
 * list for each of its decisions in turn: the decisions keep the numbers they were made with.
 */
public final class RuleOutcomes extends AbstractList<RuleOutcome> implements RandomAccess {
  /** An outcome's word: set when its rule refused. */
  private static final int REFUSED = 1 << 31;
  /** An outcome's word: set when its units used pass the word's 30 bits; they are then at the end. */
  private static final int LARGE = 1 << 30;

  private List<Rule> rules;
  private Message message;
  /**
   * Per outcome a word: {@link #REFUSED}, and the units used before the message or {@link #LARGE};
   * after the words, per refusing outcome in order, the delay to retry after and the instant to send
   * at; at the end, per large outcome in order, its units used. A long is two ints, the high first.
   */
  private int[] values;
  private int size;
  private int refusals;
  private int announced;
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
    refill(rules, message, refused);
  }

  /**
   * This list emptied for the outcomes of {@code rules} on {@code message}, as the constructor makes
   * one, in numbers of its own: what a {@link Decision} was made from before stays as it was.
   *
   * @throws IllegalArgumentException if {@code refused} is negative or more than the rules
   */
  public RuleOutcomes refill(List<Rule> rules, Message message, int refused) {
    List<Rule> kept = List.copyOf(rules);
    if (refused < 0 || refused > kept.size()) {
      throw new IllegalArgumentException("refused must be 0 to " + kept.size() + ", got " + refused);
    }
    this.rules = kept;
    this.message = Objects.requireNonNull(message, "message");
    this.values = new int[kept.size() + 4 * refused];
    this.size = 0;
    this.refusals = 0;
    this.announced = refused;
    this.sealed = false;
    return this;
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
      if (refusals == announced) {
        throw new IllegalStateException("more refusals than the " + announced + " announced");
      }
      int at = rules.size() + 4 * refusals++;
      putLong(values, at, retryAfterMs);
      putLong(values, at + 2, sendAt);
    }
    int word = allowed ? 0 : REFUSED;
    if (used < LARGE) {
      word |= (int) used;
    } else { // rare (a count above 2^30): two ints more
      word |= LARGE;
      values = Arrays.copyOf(values, values.length + 2);
      putLong(values, values.length - 2, used);
    }
    values[size++] = word;
    return this;
  }

  /** This list, from now on immutable (until {@link #refill}ed). */
  public RuleOutcomes seal() {
    sealed = true;
    return this;
  }

  /** Whether every rule has its outcome: a {@link Decision} then keeps the parts instead of a copy. */
  boolean full() {
    return size == rules.size();
  }

  List<Rule> ruleList() {
    return rules;
  }

  Message message() {
    return message;
  }

  int[] values() {
    return values;
  }

  @Override
  public RuleOutcome get(int index) {
    Objects.checkIndex(index, size);
    return outcome(rules, message, values, index);
  }

  /** Outcome {@code index} of {@code rules} on {@code message}, from {@code values} as {@link #add} writes them. */
  private static RuleOutcome outcome(List<Rule> rules, Message message, int[] values, int index) {
    Rule rule = rules.get(index);
    int n = rules.size();
    int word = values[index];
    boolean allowed = (word & REFUSED) == 0;
    long used = word & (LARGE - 1);
    if ((word & LARGE) != 0) {
      int after = 0; // large outcomes after this one: their units are nearer the end
      for (int i = index + 1; i < n; i++) {
        after += (values[i] & LARGE) != 0 ? 1 : 0;
      }
      used = getLong(values, values.length - 2 * (after + 1));
    }
    long retryAfterMs = 0;
    long sendAt = 0;
    if (!allowed) {
      int at = n;
      for (int i = 0; i < index; i++) {
        at += (values[i] & REFUSED) != 0 ? 4 : 0;
      }
      retryAfterMs = getLong(values, at);
      sendAt = getLong(values, at + 2);
    }
    return new RuleOutcome(rule.id(), rule.limit(), rule.windowMs(), used, Math.max(0, rule.limit() - used),
        allowed, rule.enforcedFor(message), retryAfterMs, sendAt, rule.boundFor(message.priority()));
  }

  private static void putLong(int[] values, int at, long value) {
    values[at] = (int) (value >>> 32);
    values[at + 1] = (int) value;
  }

  private static long getLong(int[] values, int at) {
    return (long) values[at] << 32 | values[at + 1] & 0xFFFF_FFFFL;
  }

  @Override
  public int size() {
    return size;
  }

  /**
   * The outcomes a {@link Decision} kept from a full list ({@link #full}): every rule's, read the way
   * the list reads them, immutable.
   */
  static final class Kept extends AbstractList<RuleOutcome> implements RandomAccess {
    private final List<Rule> rules;
    private final Message message;
    private final int[] values;

    Kept(List<Rule> rules, Message message, int[] values) {
      this.rules = rules;
      this.message = message;
      this.values = values;
    }

    @Override
    public RuleOutcome get(int index) {
      Objects.checkIndex(index, rules.size());
      return outcome(rules, message, values, index);
    }

    @Override
    public int size() {
      return rules.size();
    }
  }
}
