package dev.fcap.model;

import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

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
  private final boolean allowed;
  /**
   * The id once read: a String; before, null (a random id is made) or the {@code Supplier<String>} that
   * makes it (null from it: a random id).
   */
  private volatile Object decisionId;
  private final long retryAfterMs;
  private final List<String> blockedBy;
  private final List<String> shadowBlockedBy;
  private final List<RuleOutcome> rules;
  private final boolean degraded;
  private final long time;
  private final long policyVersion;
  private final boolean replayed;
  private final long sendAt;
  private final String degradedReason;
  private final String suppressedReason;
  private final boolean deferred;

  public Decision(boolean allowed, String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time, long policyVersion,
      boolean replayed, long sendAt, String degradedReason, String suppressedReason) {
    this((Object) decisionId, allowed, retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, time,
        policyVersion, replayed, sendAt, degradedReason, suppressedReason, false);
  }

  private Decision(Object decisionId, boolean allowed, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time, long policyVersion,
      boolean replayed, long sendAt, String degradedReason, String suppressedReason, boolean deferred) {
    this.allowed = allowed;
    this.deferred = deferred;
    this.decisionId = decisionId;
    this.retryAfterMs = retryAfterMs;
    this.blockedBy = List.copyOf(blockedBy);
    this.shadowBlockedBy = List.copyOf(shadowBlockedBy);
    this.rules = rules instanceof RuleOutcomes outcomes ? outcomes.seal() : List.copyOf(rules);
    this.degraded = degraded;
    this.time = time;
    this.policyVersion = policyVersion;
    this.replayed = replayed;
    this.sendAt = sendAt;
    this.degradedReason = degradedReason;
    this.suppressedReason = suppressedReason;
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
   * A decision whose id {@code makeId} makes when the id is first read, once, on the reading thread
   * ({@code makeId} must be safe to call from any thread; null from it: a random id); the other
   * components as the constructor takes them.
   */
  public static Decision withIdMadeOnRead(Supplier<String> makeId, boolean allowed, long retryAfterMs,
      List<String> blockedBy, List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time,
      long policyVersion, boolean replayed, long sendAt, String suppressedReason) {
    return new Decision(Objects.requireNonNull(makeId, "makeId"), allowed, retryAfterMs, blockedBy, shadowBlockedBy,
        rules, degraded, time, policyVersion, replayed, sendAt, null, suppressedReason, false);
  }

  /**
   * A deferred decision: not admitted now, booked for {@code sendAt} ({@code deferred}); its id
   * releases the booking (null: none can, a random id is made when first read).
   */
  public static Decision deferred(String decisionId, long retryAfterMs, List<String> blockedBy,
      List<String> shadowBlockedBy, List<RuleOutcome> rules, boolean degraded, long time, long policyVersion,
      boolean replayed, long sendAt) {
    return new Decision((Object) decisionId, false, retryAfterMs, blockedBy,
        shadowBlockedBy, rules, degraded, time, policyVersion, replayed, sendAt, null, null, true);
  }

  /** This decision marked degraded for {@code reason}. */
  public Decision degradedFor(String reason) {
    return new Decision((Object) decisionId(), allowed, retryAfterMs, blockedBy, shadowBlockedBy, rules, true, time,
        policyVersion, replayed, sendAt, reason, suppressedReason, deferred);
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
    return allowed;
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
      String made = id == null ? null : ((Supplier<?>) id).get() instanceof String s ? s : null;
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

  public List<RuleOutcome> rules() {
    return rules;
  }

  public boolean degraded() {
    return degraded;
  }

  public long time() {
    return time;
  }

  public long policyVersion() {
    return policyVersion;
  }

  public boolean replayed() {
    return replayed;
  }

  public long sendAt() {
    return sendAt;
  }

  public String degradedReason() {
    return degradedReason;
  }

  public String suppressedReason() {
    return suppressedReason;
  }

  public boolean deferred() {
    return deferred;
  }

  @Override
  public boolean equals(Object o) {
    return o == this || o instanceof Decision d && allowed == d.allowed && decisionId().equals(d.decisionId())
        && retryAfterMs == d.retryAfterMs && blockedBy.equals(d.blockedBy) && shadowBlockedBy.equals(d.shadowBlockedBy)
        && rules.equals(d.rules) && degraded == d.degraded && time == d.time && policyVersion == d.policyVersion
        && replayed == d.replayed && sendAt == d.sendAt && Objects.equals(degradedReason, d.degradedReason)
        && Objects.equals(suppressedReason, d.suppressedReason) && deferred == d.deferred;
  }

  @Override
  public int hashCode() {
    return Objects.hash(allowed, decisionId(), retryAfterMs, blockedBy, shadowBlockedBy, rules, degraded, time,
        policyVersion, replayed, sendAt, degradedReason, suppressedReason, deferred);
  }

  @Override
  public String toString() {
    return "Decision[allowed=" + allowed + ", decisionId=" + decisionId() + ", retryAfterMs=" + retryAfterMs
        + ", blockedBy=" + blockedBy + ", shadowBlockedBy=" + shadowBlockedBy + ", rules=" + rules + ", degraded="
        + degraded + ", time=" + time + ", policyVersion=" + policyVersion + ", replayed=" + replayed + ", sendAt="
        + sendAt + ", degradedReason=" + degradedReason + ", suppressedReason=" + suppressedReason
        + ", deferred=" + deferred + "]";
  }
}
