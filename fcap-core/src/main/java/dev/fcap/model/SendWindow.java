package dev.fcap.model;

import java.time.DayOfWeek;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * When messages may go, by the wall clock of a zone: a message at instant t is inside iff it is
 * inside any {@link Interval} of {@link #allow()}. An interval with {@code from < to} holds the local
 * times [from, to) of each local date whose weekday is in {@code days} and that is not
 * {@link #closed()}. An interval with {@code from > to} spans midnight: it opens on such a date at
 * {@code from} and closes on the next date at {@code to}; the weekday and closed-date tests apply to
 * the date it opened. Membership reads the local time alone, so a {@code from} inside a
 * spring-forward gap opens when the gap ends, and a local time that occurs twice is inside both times.
 *
 * @param zone the zone whose wall clock is read; null reads the recipient's (the message's zone, else
 *     the policy's, else UTC)
 * @param allow the intervals, at least one
 * @param closed local dates on which no interval opens
 */
public record SendWindow(ZoneId zone, List<Interval> allow, Set<LocalDate> closed) {

  public SendWindow {
    allow = List.copyOf(allow);
    if (allow.isEmpty()) {
      throw new IllegalArgumentException("a send window needs at least one interval");
    }
    closed = Collections.unmodifiableSet(new TreeSet<>(closed == null ? Set.of() : closed));
  }

  /** Whether the window reads the recipient's zone rather than a fixed one. */
  public boolean recipientZone() {
    return zone == null;
  }

  /**
   * Local times [from, to) on the listed weekdays; {@code from > to} spans midnight.
   *
   * @param days the weekdays on which the interval opens, at least one
   */
  public record Interval(Set<DayOfWeek> days, LocalTime from, LocalTime to) {

    public Interval {
      Objects.requireNonNull(from, "from");
      Objects.requireNonNull(to, "to");
      if (days == null || days.isEmpty()) {
        throw new IllegalArgumentException("an interval opens on at least one weekday");
      }
      if (from.equals(to)) {
        throw new IllegalArgumentException("an interval's from and to must differ");
      }
      days = Collections.unmodifiableSet(EnumSet.copyOf(days));
    }

    /** Whether the interval spans midnight: it closes on the day after it opens. */
    public boolean spansMidnight() {
      return from.isAfter(to);
    }
  }
}
