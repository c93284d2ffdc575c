package dev.fcap.engine;

import dev.fcap.model.CalendarUnit;
import java.time.DayOfWeek;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.TemporalAdjusters;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The local day, ISO week (from Monday 00:00) or calendar month of a zone that holds an instant, as
 * the instants [start, end) it spans: a day of 23 or 25 hours across a daylight-saving change is one
 * whole period. A run of {@code days} local days (a fixed window of several whole days in a zone)
 * is a period too: the local dates from a multiple of {@code days} epoch days on, so that 2-day
 * windows start on the dates whose local epoch day is even, as windows of 48 hours aligned to local
 * midnight do, and a run across a daylight-saving change lasts an hour less or more.
 *
 * <p><b>Design.</b> A period starts at the first instant of its first local date: local midnight (the
 * first one, when midnight occurs twice), or the end of the gap when clocks spring forward over
 * midnight; it ends where the next period starts. So periods split time into consecutive spans, and
 * the period holding t is the one of t's local date, except in the hour that repeats when clocks go
 * back across midnight (St. John's did at 00:01 until 2011): those instants belong to the new day,
 * whose midnight came first. Periods last days to weeks, so per zone and unit the last period
 * found is kept, and the common lookup is one map read and two comparisons; java.time computes only
 * when an instant falls outside it.
 *
 * <p>A fixed window over the periods counts a message booked days ahead in the period that holds its
 * instant, so the stores, which know no zone, are told where the next periods end ({@link
 * #periodEnds}): computed with the period, so one array per period and zone.
 */
final class LocalCalendar {
  /**
   * The period [start, end) of one zone and unit, and {@code ends}: its end and those of the periods
   * after it, in ms after its start, up to {@link #AHEAD_MS} after its end (null until first asked).
   */
  private static final class Period {
    final long start;
    final long end;
    volatile long[] ends;

    Period(long start, long end) {
      this.start = start;
      this.end = end;
    }
  }

  /**
   * How far after a period's end {@link #periodEnds} reaches: a message is booked at most 7 days after
   * its decision, which lies in the period, and a day more covers a partition decided at a later time
   * than its request's (a clock stepped back), whose bookings lie that much further.
   */
  static final long AHEAD_MS = 8 * ZoneOffsets.MS_PER_DAY;

  private static final ConcurrentHashMap<ZoneId, Period[]> PERIODS = new ConcurrentHashMap<>();
  /** Per zone and run length (days above 1), the run found last. */
  private static final ConcurrentHashMap<ZoneId, ConcurrentHashMap<Integer, Period>> RUNS = new ConcurrentHashMap<>();

  private LocalCalendar() {}

  /** The first instant (epoch milliseconds) of the period of {@code unit} in {@code zone} that holds {@code t}. */
  static long periodStart(CalendarUnit unit, long t, ZoneId zone) {
    return periodStart(unit, 1, t, zone);
  }

  /** {@link #periodStart(CalendarUnit, long, ZoneId)} of a run of {@code days} local days (a {@code DAY} unit). */
  static long periodStart(CalendarUnit unit, int days, long t, ZoneId zone) {
    return period(unit, days, zone, t).start;
  }

  /** The first instant after the period of {@code unit} in {@code zone} that holds {@code t}: the next one's start. */
  static long periodEnd(CalendarUnit unit, long t, ZoneId zone) {
    return period(unit, 1, zone, t).end;
  }

  /**
   * The end of the period of {@code unit} (a run of {@code days} local days, for {@code DAY}) in
   * {@code zone} that holds {@code t}, and of each after it up to {@link #AHEAD_MS} past its end, in
   * ms after its start: the same array for every instant of the period (read only).
   */
  static long[] periodEnds(CalendarUnit unit, int days, long t, ZoneId zone) {
    Period p = period(unit, days, zone, t);
    long[] ends = p.ends;
    if (ends == null) { // racy: at worst computed twice, the same
      java.util.List<Long> list = new java.util.ArrayList<>();
      for (long end = p.end; ; end = compute(unit, days, zone, end).end) {
        list.add(end - p.start);
        if (end >= p.end + AHEAD_MS) {
          break;
        }
      }
      ends = list.stream().mapToLong(Long::longValue).toArray();
      p.ends = ends;
    }
    return ends;
  }

  private static Period period(CalendarUnit unit, int days, ZoneId zone, long t) {
    if (unit == CalendarUnit.DAY && days > 1) {
      ConcurrentHashMap<Integer, Period> runs = RUNS.computeIfAbsent(zone, z -> new ConcurrentHashMap<>());
      Period p = runs.get(days);
      if (p == null || t < p.start || t >= p.end) {
        p = compute(unit, days, zone, t);
        runs.put(days, p);
      }
      return p;
    }
    Period[] cached = PERIODS.computeIfAbsent(zone, z -> new Period[CalendarUnit.values().length]);
    int at = unit.ordinal();
    Period p = cached[at]; // a racy read of an immutable record: at worst a recomputation
    if (p == null || t < p.start || t >= p.end) {
      p = compute(unit, 1, zone, t);
      cached[at] = p;
    }
    return p;
  }

  private static Period compute(CalendarUnit unit, int days, ZoneId zone, long t) {
    LocalDate date = LocalDate.ofEpochDay(Math.floorDiv(ZoneOffsets.localMs(zone, t), ZoneOffsets.MS_PER_DAY));
    LocalDate first = switch (unit) {
      case DAY -> LocalDate.ofEpochDay(Math.floorDiv(date.toEpochDay(), days) * days);
      case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
      case MONTH -> date.withDayOfMonth(1);
    };
    long length = unit == CalendarUnit.DAY ? days : 1;
    LocalDate next = first.plus(length, unit.temporalUnit());
    long start = ms(first.atStartOfDay(zone));
    long end = ms(next.atStartOfDay(zone));
    while (end <= t) { // the clocks went back across midnight: t is past the next period's start
      start = end;
      next = next.plus(length, unit.temporalUnit());
      end = ms(next.atStartOfDay(zone));
    }
    return new Period(start, end);
  }

  private static long ms(ZonedDateTime z) {
    return z.toEpochSecond() * 1000L;
  }
}
