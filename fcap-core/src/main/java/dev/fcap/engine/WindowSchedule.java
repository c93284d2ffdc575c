package dev.fcap.engine;

import dev.fcap.model.SendWindow;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link SendWindow} compiled to answer, for a zone, whether an instant is inside it and when it
 * next opens.
 *
 * <p><b>Design.</b> Membership reads the wall clock alone: the local date (as an epoch day) and the
 * local time of day, from the zone's offset at the instant ({@link ZoneOffsets}, cached per zone, no
 * allocation). An interval with {@code from < to} holds [from, to) of each local date that opens it
 * (its weekday listed, the date not closed); one with {@code from > to} holds [from, 24:00) of such a
 * date and [00:00, to) of the date after it, so a date's weekday and closing decide for the night that
 * begins on it. Weekdays are a bit mask, closed dates a sorted array of epoch days.
 *
 * <p><b>Next opening.</b> The local time moves forward continuously between offset transitions, so the
 * window can only open at an instant whose local time is some interval's {@code from} on a date that
 * opens it, or at a transition (the local time jumps: into an interval after a backward jump, or past
 * a {@code from} inside a spring-forward gap). {@link #nextOpening} takes the earliest of those
 * candidates after {@code t} at which the window is open. Example, New York, {@code 02:30-04:00} on
 * 2026-03-08: 02:30 does not exist that night (02:00 EST jumps to 03:00 EDT), so the window opens at
 * the jump, 07:00 UTC, with the local time 03:00.
 *
 * <p><b>Shut spans.</b> The search reads java.time and runs for every message outside the window (its
 * outcome and {@code sendAt} both ask), so per zone the last span found shut is kept: the opening
 * found from t is the first open instant at or after t, so the window is shut in [t, opening) and
 * every instant of that span opens at the same instant. The common refusal is then one map read and
 * two comparisons, as for the zone's offset ({@link ZoneOffsets}).
 */
final class WindowSchedule {
  private static final long MS_PER_DAY = ZoneOffsets.MS_PER_DAY;
  /** Local midnight is at most this far from UTC midnight (the widest offset java.time allows). */
  private static final long MAX_OFFSET_MS = 18 * 3_600_000L;
  /** Days searched past the closed dates for an opening (a year covers any seasonal gap). */
  private static final int SEARCH_DAYS = 400;

  private final SendWindow window;
  private final int[] fromMs;
  private final int[] toMs;
  /** Per interval, bit {@code d} set iff it opens on ISO weekday d + 1 (Monday is bit 0). */
  private final int[] dayMasks;
  private final long[] closedDays;
  /** Per zone, the last span found shut and its opening; replaced by a search outside it. */
  private final ConcurrentHashMap<ZoneId, Shut> shutSpans = new ConcurrentHashMap<>();

  /** The window is shut in [from, opening) and opens at {@code opening}. */
  private record Shut(long from, long opening) {}

  WindowSchedule(SendWindow window) {
    this.window = window;
    List<SendWindow.Interval> allow = window.allow();
    fromMs = new int[allow.size()];
    toMs = new int[allow.size()];
    dayMasks = new int[allow.size()];
    for (int i = 0; i < allow.size(); i++) {
      SendWindow.Interval in = allow.get(i);
      fromMs[i] = in.from().toSecondOfDay() * 1000;
      toMs[i] = in.to().toSecondOfDay() * 1000;
      for (DayOfWeek d : in.days()) {
        dayMasks[i] |= 1 << (d.getValue() - 1);
      }
    }
    closedDays = window.closed().stream().mapToLong(LocalDate::toEpochDay).sorted().toArray();
  }

  SendWindow window() {
    return window;
  }

  /** The zone whose wall clock this window reads for a recipient in {@code recipientZone}. */
  ZoneId zoneFor(ZoneId recipientZone) {
    return window.recipientZone() ? recipientZone : window.zone();
  }

  /** Whether the window is open at {@code t} (epoch milliseconds) by the wall clock of {@code zone}. */
  boolean isOpen(long t, ZoneId zone) {
    long local = ZoneOffsets.localMs(zone, t);
    long day = Math.floorDiv(local, MS_PER_DAY);
    return openAt(day, (int) (local - day * MS_PER_DAY));
  }

  /**
   * The earliest instant at or after {@code t} at which the window is open in {@code zone}; {@code -1}
   * if none within {@value #SEARCH_DAYS} days after the last closed date.
   */
  long nextOpening(long t, ZoneId zone) {
    if (isOpen(t, zone)) {
      return t;
    }
    Shut known = shutSpans.get(zone);
    if (known != null && t >= known.from && t < known.opening) {
      return known.opening;
    }
    long opening = search(t, zone);
    if (opening >= 0) {
      shutSpans.put(zone, new Shut(t, opening));
    }
    return opening;
  }

  /**
   * The earliest instant after {@code t} and at most {@code until} at which the window is shut in
   * {@code zone}, or {@code Long.MAX_VALUE} if it stays open through {@code until}. Membership changes
   * only where the local time reaches an interval's {@code to}, a local midnight (a new date, whose
   * weekday or closing may differ) or an offset transition, so those are the candidates.
   */
  long nextClosing(long t, ZoneId zone, long until) {
    ZoneRules rules = zone.getRules();
    long best = Long.MAX_VALUE;
    long firstDay = Math.floorDiv(ZoneOffsets.localMs(zone, t), MS_PER_DAY) - 1;
    long lastDay = Math.floorDiv(ZoneOffsets.localMs(zone, until), MS_PER_DAY) + 1;
    for (long day = firstDay; day <= lastDay; day++) {
      best = earliestShutAt(rules, day, 0, t, until, zone, best);
      for (int to : toMs) {
        best = earliestShutAt(rules, day, to, t, until, zone, best);
      }
    }
    Instant after = Instant.ofEpochMilli(t);
    for (ZoneOffsetTransition tr = rules.nextTransition(after); tr != null; tr = rules.nextTransition(after)) {
      long at = tr.toEpochSecond() * 1000L;
      if (at >= best || at > until) {
        break;
      }
      if (at > t && !isOpen(at, zone)) {
        return at;
      }
      after = tr.getInstant();
    }
    return best;
  }

  /** {@code best}, or an earlier instant in (t, until] whose local time is {@code day} at {@code msOfDay} and shut. */
  private long earliestShutAt(ZoneRules rules, long day, int msOfDay, long t, long until, ZoneId zone, long best) {
    LocalDateTime local = LocalDate.ofEpochDay(day).atStartOfDay().plusNanos(msOfDay * 1_000_000L);
    for (ZoneOffset offset : rules.getValidOffsets(local)) { // none in a gap: the transition is a candidate
      long at = local.toEpochSecond(offset) * 1000L;
      if (at > t && at <= until && at < best && !isOpen(at, zone)) {
        best = at;
      }
    }
    return best;
  }

  /** {@link #nextOpening} for a {@code t} at which the window is shut, computed. */
  private long search(long t, ZoneId zone) {
    ZoneRules rules = zone.getRules();
    long best = Long.MAX_VALUE;
    long firstDay = Math.floorDiv(ZoneOffsets.localMs(zone, t), MS_PER_DAY) - 1;
    long lastDay = Math.max(firstDay, closedDays.length == 0 ? firstDay : closedDays[closedDays.length - 1])
        + SEARCH_DAYS;
    for (long day = firstDay; day <= lastDay && day * MS_PER_DAY - MAX_OFFSET_MS <= best; day++) {
      for (int i = 0; i < fromMs.length; i++) {
        if (opensOn(i, day)) {
          best = earliestOpenStart(rules, day, fromMs[i], t, zone, best);
        }
      }
    }
    Instant after = Instant.ofEpochMilli(t);
    for (ZoneOffsetTransition tr = rules.nextTransition(after); tr != null; tr = rules.nextTransition(after)) {
      long at = tr.toEpochSecond() * 1000L;
      if (at >= best) {
        break;
      }
      if (at > t && isOpen(at, zone)) {
        return at;
      }
      after = tr.getInstant();
    }
    return best == Long.MAX_VALUE ? -1 : best;
  }

  /** {@code best}, or an earlier instant after {@code t} whose local time is {@code day} at {@code fromMs} and open. */
  private long earliestOpenStart(ZoneRules rules, long day, int fromMs, long t, ZoneId zone, long best) {
    LocalDateTime start = LocalDate.ofEpochDay(day).atStartOfDay().plusNanos(fromMs * 1_000_000L);
    List<ZoneOffset> offsets = rules.getValidOffsets(start);
    if (offsets.isEmpty()) {
      long at = rules.getTransition(start).toEpochSecond() * 1000L; // a gap: the first instant after it
      return at > t && at < best && isOpen(at, zone) ? at : best;
    }
    for (ZoneOffset offset : offsets) {
      long at = start.toEpochSecond(offset) * 1000L;
      if (at > t && at < best && isOpen(at, zone)) {
        best = at;
      }
    }
    return best;
  }

  private boolean openAt(long day, int msOfDay) {
    for (int i = 0; i < fromMs.length; i++) {
      int from = fromMs[i];
      int to = toMs[i];
      if (from < to) {
        if (msOfDay >= from && msOfDay < to && opensOn(i, day)) {
          return true;
        }
      } else if (msOfDay >= from ? opensOn(i, day) : msOfDay < to && opensOn(i, day - 1)) {
        return true;
      }
    }
    return false;
  }

  /** Whether interval {@code i} opens on the local date {@code day} (an epoch day). */
  private boolean opensOn(int i, long day) {
    int weekday = (int) Math.floorMod(day + 3, 7); // 1970-01-01 was a Thursday: Monday is 0
    return (dayMasks[i] & (1 << weekday)) != 0 && (closedDays.length == 0 || Arrays.binarySearch(closedDays, day) < 0);
  }
}
