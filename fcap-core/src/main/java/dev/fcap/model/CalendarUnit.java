package dev.fcap.model;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * A window that follows the calendar of a time zone rather than a fixed length: the local day
 * (midnight to midnight, 23 or 25 hours across a daylight-saving change), the ISO week (Monday 00:00
 * to Monday 00:00) or the calendar month.
 */
public enum CalendarUnit {
  DAY("1d", Duration.ofDays(1), ChronoUnit.DAYS),
  WEEK("1w", Duration.ofDays(7), ChronoUnit.WEEKS),
  MONTH("1mo", Duration.ofDays(31), ChronoUnit.MONTHS);

  private final String id;
  private final Duration longest;
  private final ChronoUnit temporalUnit;

  CalendarUnit(String id, Duration longest, ChronoUnit temporalUnit) {
    this.id = id;
    this.longest = longest;
    this.temporalUnit = temporalUnit;
  }

  /** One period as a date-based unit of java.time. */
  public ChronoUnit temporalUnit() {
    return temporalUnit;
  }

  /** The window as written in rule files: {@code 1d}, {@code 1w} or {@code 1mo}. */
  public String id() {
    return id;
  }

  /**
   * The nominal length (a month counts as 31 days): what {@link Rule#window()} holds for a calendar
   * rule, so that horizons sized by the window cover the longest period.
   */
  public Duration nominal() {
    return longest;
  }

  public static Optional<CalendarUnit> fromId(String id) {
    for (CalendarUnit u : values()) {
      if (u.id.equals(id)) {
        return Optional.of(u);
      }
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return id;
  }
}
