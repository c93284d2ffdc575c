package dev.fcap.model;

import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * The answer for one message. Immutable; a value like a record (its accessors are its components).
 *
 * <ul>
 *   <li>{@code allowed}: true iff every applicable enforced rule admitted it (it was then recorded in every
 *       applicable rule, shadow ones included)
 *   <li>{@code decisionId}: identifies the decision for {@code release} and audit; null for a decision that
 *       nobody can release: its id is then 96 random bits in hex, made when first read (most callers
 *       never read a refusal's id, and making it is most of what a refusal allocates). A decision made
 *       by {@link #withIdMadeOnRead} makes its id when first read too (sealing an id costs more than a
 *       caller that only asks whether to send should pay)
 *   <li>{@code retryAfterMs}: 0 when allowed; otherwise the earliest delay after which every enforced rule
 *       would admit the same message if nothing else were sent; {@code -1} if that never happens
 *   <li>{@code blockedBy}: the enforced rules that refused it
 *   <li>{@code shadowBlockedBy}: the shadow rules that would have refused it
 *   <li>{@code rules}: one outcome per applicable rule, in policy order
 *   <li>{@code degraded}: true when decided by the failure policy instead of the store
 *   <li>{@code time}: the store clock at the decision, epoch milliseconds
 *   <li>{@code replayed}: true when the message id was decided before: this is that admitted decision again
 *       (its id, time and counts), and nothing was recorded now
 *   <li>{@code sendAt}: 0 when allowed; otherwise the earliest instant (epoch milliseconds) at or after
 *       {@code time} at which every enforced rule would admit the same message if nothing else were sent;
 *       {@code -1} if that never happens
 *   <li>{@code degradedReason}: null unless {@code degraded}; then why the store did not decide:
 *       {@link #STORE_DOWN}, {@link #STORE_FULL} or {@link #STORE_RESET}
 *   <li>{@code deferred}: true when the message, not admitted now, was booked for {@code sendAt} (it asked
 *       to be: {@link Message#defer()}): it is recorded there, in every rule, and its {@code decisionId}
 *       releases the slot; {@code allowed} is false, and the message is to be sent at {@code sendAt}
 *   <li>{@code suppressedReason}: null unless the recipient is on the tenant's suppression list for this
 *       message ({@link Suppression#BLOCKED_BY} is then among {@code blockedBy}): the entry's reason
 * </ul>
 */
public final class Decision {
  /** A degraded decision's reason: the store is down (an outage); the failure policy decided. */
  public static final String STORE_DOWN = "store_down";
  /** A degraded decision's reason: the embedded store is full and cannot hold a new partition. */
  public static final String STORE_FULL = "store_full";
  /**
   * A degraded decision's reason: the shared store lost its data (a Redis restarted empty) and the
   * failure policy decides until the longest window has passed ({@code failure.storeReset: policy}).
   */
  public static final String STORE_RESET = "store_reset";

  private static final HexFormat HEX = HexFormat.of();
  private static final int ALLOWED = 1;
  private static final int DEGRADED = 2;
  private static final int REPLAYED = 4;
  private static final int DEFERRED = 8;
  /** With {@link #reasons} one String: it is the suppressed reason, not the degraded one. */
  private static final int SUPPRESSED_REASON = 16;

  /**
   * {@link #ALLOWED}, {@link #DEGRADED}, {@link #REPLAYED}, {@link #DEFERRED}, {@link #SUPPRESSED_REASON}.
   * A decision is made for every message, so it is laid out small: its booleans are bits of this byte
   * and its two reasons, rarely set, share a field ({@link #reasons}); with its outcomes kept as
   * numbers it is 80 bytes (a 12-byte header, 8 references, 4 longs, this byte).
   */
  private final byte flags;
  /**
   * The id once read: a String; before, null (a random id is made) or the input {@link #makeId} makes
   * it from (null from it: a random id).
   */
  private volatile Object decisionId;
  private final Function<byte[], String> makeId;
  private final long retryAfterMs;
  private final List<String> blockedBy;
  private final List<String> shadowBlockedBy;
  /**
   * The outcomes: a {@code List<RuleOutcome>}, or with {@link #outcomeValues} the {@code List<Rule>}
   * those numbers are the outcomes of ({@link RuleOutcomes}: no object per decision for them).
   */
  private final List<?> rules;
  private final Message outcomeMessage;
  private final int[] outcomeValues;
  private final long time;
  private final long policyVersion;
  private final long sendAt;
  /**
   * {@code degradedReason} and {@code suppressedReason}: null when neither is set; the one set (which,
   * {@link #SUPPRESSED_REASON} says); or when both are, a {@code String[]} of the two, in that order.
   */
  private final Object reasons;

  public Decision(boolean allowed, String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time, long policyVersion,
      boolean replayed, long sendAt, String degradedReason, String suppressedReason) {
    this(null, decisionId, allowed, retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, time,
        policyVersion, replayed, sendAt, degradedReason, suppressedReason, false);
  }

  private Decision(Function<byte[], String> makeId, Object decisionId, boolean allowed, long retryAfterMs,
      List<String> blockedBy, List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time,
      long policyVersion, boolean replayed, long sendAt, String degradedReason, String suppressedReason,
      boolean deferred) {
    this.flags = (byte) ((allowed ? ALLOWED : 0) | (degraded ? DEGRADED : 0) | (replayed ? REPLAYED : 0)
        | (deferred ? DEFERRED : 0) | (degradedReason == null && suppressedReason != null ? SUPPRESSED_REASON : 0));
    this.reasons = degradedReason == null ? suppressedReason
        : suppressedReason == null ? degradedReason : new String[] {degradedReason, suppressedReason};
    this.makeId = makeId;
    this.decisionId = decisionId;
    this.retryAfterMs = retryAfterMs;
    this.blockedBy = List.copyOf(blockedBy);
    this.shadowBlockedBy = List.copyOf(shadowBlockedBy);
    if (rules instanceof RuleOutcomes outcomes && outcomes.full()) {
      outcomes.seal();
      this.rules = outcomes.ruleList();
      this.outcomeMessage = outcomes.message();
      this.outcomeValues = outcomes.values();
    } else {
      this.rules = rules instanceof RuleOutcomes outcomes ? List.copyOf(outcomes.seal()) : List.copyOf(rules);
      this.outcomeMessage = null;
      this.outcomeValues = null;
    }
    this.time = time;
    this.policyVersion = policyVersion;
    this.sendAt = sendAt;
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

  /**
   * A decision whose id is {@code makeId.apply(input)}, made when the id is first read, once, on the
   * reading thread ({@code makeId} must be safe to call from any thread, and {@code input} must not
   * change; null from it: a random id); the other components as the constructor takes them.
   */
  public static Decision withIdMadeOnRead(Function<byte[], String> makeId, byte[] input, boolean allowed,
      long retryAfterMs, List<String> blockedBy, List<String> shadowBlockedBy, List<RuleOutcome> rules,
      boolean degraded, long time, long policyVersion, boolean replayed, long sendAt, String suppressedReason) {
    return new Decision(Objects.requireNonNull(makeId, "makeId"), Objects.requireNonNull(input, "input"), allowed,
        retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, time, policyVersion, replayed, sendAt, null,
        suppressedReason, false);
  }

  /**
   * A deferred decision: not admitted now, booked for {@code sendAt} ({@code deferred}); its id
   * releases the booking (null: none can, a random id is made when first read).
   */
  public static Decision deferred(String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time, long policyVersion,
      boolean replayed, long sendAt) {
    return new Decision(null, decisionId, false, retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, time,
        policyVersion, replayed, sendAt, null, null, true);
  }

  /** This decision marked degraded for {@code reason}. */
  public Decision degradedFor(String reason) {
    return new Decision(null, decisionId(), allowed(), retryAfterMs, blockedBy, shadowBlockedBy, rules(), true, time,
        policyVersion, replayed(), sendAt, reason, suppressedReason(), deferred());
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

  public boolean allowed() {
    return (flags & ALLOWED) != 0;
  }

  /** The decision's id; one not given is made on the first read (see the class's parameters). */
  public String decisionId() {
    Object id = decisionId;
    if (id instanceof String made) {
      return made;
    }
    synchronized (this) {
      id = decisionId;
      if (id instanceof String made) {
        return made;
      }
      String made = id == null ? null : makeId.apply((byte[]) id);
      if (made == null) {
        byte[] random = new byte[12];
        ThreadLocalRandom.current().nextBytes(random);
        made = HEX.formatHex(random);
      }
      decisionId = made;
      return made;
    }
  }

  public long retryAfterMs() {
    return retryAfterMs;
  }

  public List<String> blockedBy() {
    return blockedBy;
  }

  public List<String> shadowBlockedBy() {
    return shadowBlockedBy;
  }

  @SuppressWarnings("unchecked") // the field's two forms, as its comment says
  public List<RuleOutcome> rules() {
    return outcomeValues == null ? (List<RuleOutcome>) rules
        : new RuleOutcomes.Kept((List<Rule>) rules, outcomeMessage, outcomeValues);
  }

  public boolean degraded() {
    return (flags & DEGRADED) != 0;
  }

  public long time() {
    return time;
  }

  public long policyVersion() {
    return policyVersion;
  }

  public boolean replayed() {
    return (flags & REPLAYED) != 0;
  }

  public long sendAt() {
    return sendAt;
  }

  public String degradedReason() {
    return reasons instanceof String[] both ? both[0] : (flags & SUPPRESSED_REASON) != 0 ? null : (String) reasons;
  }

  public String suppressedReason() {
    return reasons instanceof String[] both ? both[1] : (flags & SUPPRESSED_REASON) != 0 ? (String) reasons : null;
  }

  public boolean deferred() {
    return (flags & DEFERRED) != 0;
  }

  @Override
  public boolean equals(Object o) {
    // the flags hold the booleans and which reason is set, the reasons compared as components
    return o == this || o instanceof Decision d && flags == d.flags && decisionId().equals(d.decisionId())
        && retryAfterMs == d.retryAfterMs && blockedBy.equals(d.blockedBy) && shadowBlockedBy.equals(d.shadowBlockedBy)
        && rules().equals(d.rules()) && time == d.time && policyVersion == d.policyVersion && sendAt == d.sendAt
        && Objects.equals(degradedReason(), d.degradedReason())
        && Objects.equals(suppressedReason(), d.suppressedReason());
  }

  @Override
  public int hashCode() {
    return Objects.hash(allowed(), decisionId(), retryAfterMs, blockedBy, shadowBlockedBy, rules(), degraded(), time,
        policyVersion, replayed(), sendAt, degradedReason(), suppressedReason(), deferred());
  }

  @Override
  public String toString() {
    return "Decision[allowed=" + allowed() + ", decisionId=" + decisionId() + ", retryAfterMs=" + retryAfterMs
        + ", blockedBy=" + blockedBy + ", shadowBlockedBy=" + shadowBlockedBy + ", rules=" + rules() + ", degraded="
        + degraded() + ", time=" + time + ", policyVersion=" + policyVersion + ", replayed=" + replayed()
        + ", sendAt=" + sendAt + ", degradedReason=" + degradedReason() + ", suppressedReason=" + suppressedReason()
        + ", deferred=" + deferred() + "]";
  }
}
