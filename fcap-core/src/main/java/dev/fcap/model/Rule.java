package dev.fcap.model;

import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Objects;

/**
 * At most {@link #limit()} (in cost units) per {@link #window()} for the messages that share the
 * values of {@link #key()}, among the messages that satisfy {@link #match()} and not
 * {@link #exempt()}. Rules read from a rules file or the API are validated whole by
 * {@link dev.fcap.policy.PolicyParser} (limits, windows, keys, ids: an invalid policy is refused with
 * every error); this record itself only guards against nulls, so rules built in code are the
 * caller's to keep valid.
 *
 * @param precision sub-windows per window, for {@code sliding-counter} only
 * @param zone time zone whose local days a {@code fixed-window} rule of whole days counts (a local day, or
 *     runs of n local dates for a window of n days); null aligns to the epoch (or, with
 *     {@code recipientZone}, to the recipient's zone)
 * @param recipientZone whether a {@code fixed-window} calendar rule follows the recipient's zone (the
 *     message's, else the policy's, else UTC) rather than {@code zone}
 * @param calendar for a {@code fixed-window} rule of one day, week or month: the calendar period its
 *     windows follow in its zone ({@code window} then holds {@link CalendarUnit#nominal()}); else null
 * @param sendWindow for a send-window rule, when messages may go; such a rule counts nothing, so its
 *     {@code limit} is 0, its {@code window} zero and its {@code key} empty. Null for a counting rule
 * @param headroom the units of the limit kept for the classes above each {@link Priority}; null: none
 * @param countOnly the messages this rule never refuses but, when they are admitted, still counts
 *     (a transactional message that must go but uses up the cap); null: none
 */
public record Rule(
    String id,
    String description,
    long limit,
    Duration window,
    List<Dimension> key,
    Condition match,
    Condition exempt,
    Algorithm algorithm,
    int precision,
    Mode mode,
    ZoneId zone,
    boolean recipientZone,
    CalendarUnit calendar,
    SendWindow sendWindow,
    Headroom headroom,
    Condition countOnly) {

  public static final int DEFAULT_PRECISION = 60;

  public Rule {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(window, "window");
    key = List.copyOf(key);
    match = match == null ? Condition.ANY : match;
    exempt = exempt == null ? Condition.ANY : exempt;
    algorithm = algorithm == null ? Algorithm.SLIDING_LOG : algorithm;
    mode = mode == null ? Mode.ENFORCE : mode;
    precision = precision == 0 ? DEFAULT_PRECISION : precision;
    headroom = headroom == null ? Headroom.NONE : headroom;
    // a calendar belongs to a fixed-window rule whose window is its nominal length; a fixed-window
    // rule of one day follows the local day, however it was built
    if (calendar != null && (algorithm != Algorithm.FIXED_WINDOW || !window.equals(calendar.nominal()))) {
      calendar = null;
    }
    if (calendar == null && algorithm == Algorithm.FIXED_WINDOW && window.equals(CalendarUnit.DAY.nominal())) {
      calendar = CalendarUnit.DAY;
    }
  }

  /** A rule without headroom. */
  public Rule(String id, String description, long limit, Duration window, List<Dimension> key, Condition match,
      Condition exempt, Algorithm algorithm, int precision, Mode mode, ZoneId zone, boolean recipientZone,
      CalendarUnit calendar, SendWindow sendWindow) {
    this(id, description, limit, window, key, match, exempt, algorithm, precision, mode, zone, recipientZone, calendar,
        sendWindow, null, null);
  }

  /** A counting rule without a calendar. */
  public Rule(String id, String description, long limit, Duration window, List<Dimension> key, Condition match,
      Condition exempt, Algorithm algorithm, int precision, Mode mode, ZoneId zone) {
    this(id, description, limit, window, key, match, exempt, algorithm, precision, mode, zone, false, null, null, null,
        null);
  }

  /** A send-window rule: it admits a message iff the message's instant is inside {@code window}. */
  public static Rule ofSendWindow(String id, String description, SendWindow window, Condition match, Condition exempt,
      Mode mode) {
    return new Rule(id, description, 0, Duration.ZERO, List.of(), match, exempt, null, 0, mode, null, false, null,
        Objects.requireNonNull(window, "window"), null, null);
  }

  /** A sliding-log rule, enforced, applying to every message. */
  public static Rule of(String id, long limit, Duration window, Dimension... key) {
    return new Rule(id, null, limit, window, List.of(key), null, null, null, 0, null, null);
  }

  public long windowMs() {
    return window.toMillis();
  }

  /** Whether this rule is a send window rather than a counter. */
  public boolean isSendWindow() {
    return sendWindow != null;
  }

  public boolean enforced() {
    return mode == Mode.ENFORCE;
  }

  /** Whether this rule applies to the message: it matches and is not exempt. */
  public boolean appliesTo(Message message) {
    return match.test(message) && (exempt.isEmpty() || !exempt.test(message));
  }

  public Rule withLimit(long newLimit) {
    return new Rule(id, description, newLimit, window, key, match, exempt, algorithm, precision, mode, zone,
        recipientZone, calendar, sendWindow, headroom, countOnly);
  }

  public Rule withWindow(Duration newWindow) {
    return new Rule(id, description, limit, newWindow, key, match, exempt, algorithm, precision, mode, zone,
        recipientZone, calendar, sendWindow, headroom, countOnly);
  }

  public Rule withMode(Mode newMode) {
    return new Rule(id, description, limit, window, key, match, exempt, algorithm, precision, newMode, zone,
        recipientZone, calendar, sendWindow, headroom, countOnly);
  }

  public Rule withMatch(Condition newMatch) {
    return new Rule(id, description, limit, window, key, newMatch, exempt, algorithm, precision, mode, zone,
        recipientZone, calendar, sendWindow, headroom, countOnly);
  }

  public Rule withExempt(Condition newExempt) {
    return new Rule(id, description, limit, window, key, match, newExempt, algorithm, precision, mode, zone,
        recipientZone, calendar, sendWindow, headroom, countOnly);
  }

  public Rule withHeadroom(Headroom newHeadroom) {
    return new Rule(id, description, limit, window, key, match, exempt, algorithm, precision, mode, zone,
        recipientZone, calendar, sendWindow, newHeadroom, countOnly);
  }

  public Rule withCountOnly(Condition newCountOnly) {
    return new Rule(id, description, limit, window, key, match, exempt, algorithm, precision, mode, zone,
        recipientZone, calendar, sendWindow, headroom, newCountOnly);
  }

  /**
   * Whether this rule may refuse {@code message}: it is enforced, and the message is neither
   * {@link #countOnly()} here nor an {@link Message#override() override}. A rule that may not refuse
   * a message still counts it when it is admitted.
   */
  public boolean enforcedFor(Message message) {
    return mode == Mode.ENFORCE && !message.override() && (countOnly == null || !countOnly.test(message));
  }

  /** The most a message of {@code priority} may bring this rule's count to: the limit less its headroom. */
  public long boundFor(Priority priority) {
    return limit - headroom.of(priority);
  }

  public Rule withAlgorithm(Algorithm newAlgorithm) {
    return new Rule(id, description, limit, window, key, match, exempt, newAlgorithm, precision, mode, zone,
        recipientZone, calendar, sendWindow, headroom, countOnly);
  }
}
