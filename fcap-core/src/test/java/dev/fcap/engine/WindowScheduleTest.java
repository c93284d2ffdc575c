package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.CalendarUnit;
import dev.fcap.model.SendWindow;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Worked examples of {@link WindowSchedule} and {@link LocalCalendar}, the ones docs/algorithms.md states. */
class WindowScheduleTest {
  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

  private static SendWindow.Interval every(String from, String to, DayOfWeek... days) {
    Set<DayOfWeek> set = days.length == 0 ? EnumSet.allOf(DayOfWeek.class) : EnumSet.copyOf(List.of(days));
    return new SendWindow.Interval(set, LocalTime.parse(from), LocalTime.parse(to));
  }

  private static WindowSchedule schedule(SendWindow.Interval... allow) {
    return new WindowSchedule(new SendWindow(null, List.of(allow), Set.of()));
  }

  private static long at(String instant) {
    return Instant.parse(instant).toEpochMilli();
  }

  @Test
  void weekdayQuietHoursOpenOnMondayAcrossTheSpringChange() {
    WindowSchedule quiet = schedule(every("08:00", "21:00", DayOfWeek.MONDAY, DayOfWeek.TUESDAY,
        DayOfWeek.WEDNESDAY, DayOfWeek.THURSDAY, DayOfWeek.FRIDAY));
    long fridayNight = at("2026-03-07T03:00:00Z"); // Friday 22:00 EST
    assertThat(quiet.isOpen(fridayNight, NEW_YORK)).isFalse();
    // Monday 08:00 EDT: clocks sprang forward on Sunday, so 12:00 UTC, not 13:00
    assertThat(quiet.nextOpening(fridayNight, NEW_YORK)).isEqualTo(at("2026-03-09T12:00:00Z"));
    assertThat(quiet.isOpen(at("2026-03-09T12:00:00Z"), NEW_YORK)).isTrue();
    assertThat(quiet.isOpen(at("2026-03-09T11:59:59.999Z"), NEW_YORK)).isFalse();
    assertThat(quiet.isOpen(at("2026-03-10T00:59:59.999Z"), NEW_YORK)).isTrue(); // 20:59:59.999 EDT
    assertThat(quiet.isOpen(at("2026-03-10T01:00:00Z"), NEW_YORK)).isFalse();
  }

  @Test
  void aFromInsideTheSpringGapOpensWhenTheGapEnds() {
    WindowSchedule night = schedule(every("02:30", "04:00"));
    long before = at("2026-03-08T06:00:00Z"); // 01:00 EST; 02:00 EST jumps to 03:00 EDT at 07:00 UTC
    assertThat(night.nextOpening(before, NEW_YORK)).isEqualTo(at("2026-03-08T07:00:00Z"));
    assertThat(night.isOpen(at("2026-03-08T06:59:59.999Z"), NEW_YORK)).isFalse();
    assertThat(night.isOpen(at("2026-03-08T07:59:59.999Z"), NEW_YORK)).isTrue(); // 03:59:59.999 EDT
    assertThat(night.isOpen(at("2026-03-08T08:00:00Z"), NEW_YORK)).isFalse();
    // a window wholly inside the gap does not open that night: the next opening is the next night's
    WindowSchedule gap = schedule(every("02:10", "02:50"));
    assertThat(gap.nextOpening(before, NEW_YORK)).isEqualTo(at("2026-03-09T06:10:00Z"));
  }

  @Test
  void aRepeatedLocalTimeIsInsideBothTimes() {
    WindowSchedule early = schedule(every("01:00", "01:30"));
    // 2026-11-01: 02:00 EDT goes back to 01:00 EST at 06:00 UTC, so 01:00-01:30 happens twice
    assertThat(early.isOpen(at("2026-11-01T05:00:00Z"), NEW_YORK)).isTrue();
    assertThat(early.isOpen(at("2026-11-01T05:30:00Z"), NEW_YORK)).isFalse();
    assertThat(early.nextOpening(at("2026-11-01T05:30:00Z"), NEW_YORK)).isEqualTo(at("2026-11-01T06:00:00Z"));
    assertThat(early.isOpen(at("2026-11-01T06:29:59.999Z"), NEW_YORK)).isTrue();
    assertThat(early.nextOpening(at("2026-11-01T06:30:00Z"), NEW_YORK)).isEqualTo(at("2026-11-02T06:00:00Z"));
    // one that starts in the repeated hour opens at the instant the clocks go back
    WindowSchedule late = schedule(every("01:40", "03:00"));
    assertThat(late.nextOpening(at("2026-11-01T05:50:00Z"), NEW_YORK)).isEqualTo(at("2026-11-01T05:50:00Z"));
    WindowSchedule inTheHour = schedule(every("00:30", "01:15"));
    assertThat(inTheHour.nextOpening(at("2026-11-01T05:15:00Z"), NEW_YORK)).isEqualTo(at("2026-11-01T06:00:00Z"));
  }

  @Test
  void aNightBelongsToTheDayItOpens() {
    SendWindow fridayNights = new SendWindow(ZoneOffset.UTC, List.of(every("22:00", "06:00", DayOfWeek.FRIDAY)),
        Set.of(LocalDate.of(2026, 12, 25))); // a Friday
    WindowSchedule w = new WindowSchedule(fridayNights);
    assertThat(w.isOpen(at("2026-12-18T22:00:00Z"), ZoneOffset.UTC)).isTrue();
    assertThat(w.isOpen(at("2026-12-19T05:59:59.999Z"), ZoneOffset.UTC)).isTrue(); // Saturday, opened Friday
    assertThat(w.isOpen(at("2026-12-19T06:00:00Z"), ZoneOffset.UTC)).isFalse();
    assertThat(w.isOpen(at("2026-12-25T23:00:00Z"), ZoneOffset.UTC)).isFalse(); // closed
    assertThat(w.isOpen(at("2026-12-26T03:00:00Z"), ZoneOffset.UTC)).isFalse(); // the closed Friday's night
    assertThat(w.nextOpening(at("2026-12-25T12:00:00Z"), ZoneOffset.UTC)).isEqualTo(at("2027-01-01T22:00:00Z"));
    assertThat(w.zoneFor(NEW_YORK)).isEqualTo(ZoneOffset.UTC);
  }

  @Test
  void quarterAndHalfHourZones() {
    WindowSchedule office = schedule(every("09:00", "17:00"));
    assertThat(office.nextOpening(at("2026-01-05T00:00:00Z"), ZoneId.of("Asia/Kathmandu")))
        .isEqualTo(at("2026-01-05T03:15:00Z"));
    assertThat(office.zoneFor(ZoneId.of("Asia/Kolkata"))).isEqualTo(ZoneId.of("Asia/Kolkata"));
    // Lord Howe springs forward 30 minutes, 02:00 to 02:30, on 2026-10-04: 02:00-02:20 does not exist
    ZoneId lordHowe = ZoneId.of("Australia/Lord_Howe");
    WindowSchedule gap = schedule(every("02:00", "02:20"));
    assertThat(gap.nextOpening(at("2026-10-03T15:00:00Z"), lordHowe)).isEqualTo(at("2026-10-04T15:00:00Z"));
  }

  @Test
  void localDaysOf23And25HoursAreWhole() {
    long springDay = at("2026-03-08T12:00:00Z");
    assertThat(LocalCalendar.periodStart(CalendarUnit.DAY, springDay, NEW_YORK)).isEqualTo(at("2026-03-08T05:00:00Z"));
    assertThat(LocalCalendar.periodEnd(CalendarUnit.DAY, springDay, NEW_YORK)).isEqualTo(at("2026-03-09T04:00:00Z"));
    long fallDay = at("2026-11-01T12:00:00Z");
    assertThat(LocalCalendar.periodEnd(CalendarUnit.DAY, fallDay, NEW_YORK)
        - LocalCalendar.periodStart(CalendarUnit.DAY, fallDay, NEW_YORK)).isEqualTo(Duration.ofHours(25).toMillis());
    ZoneId lordHowe = ZoneId.of("Australia/Lord_Howe");
    long lordHoweSpring = at("2026-10-04T06:00:00Z");
    assertThat(LocalCalendar.periodEnd(CalendarUnit.DAY, lordHoweSpring, lordHowe)
        - LocalCalendar.periodStart(CalendarUnit.DAY, lordHoweSpring, lordHowe))
        .isEqualTo(Duration.ofMinutes(23 * 60 + 30).toMillis());
  }

  @Test
  void runsOfLocalDaysStartOnMultiplesOfTheirLengthAndSpanTheChange() {
    // 2026-03-08 is epoch day 20520: the 2-day run [03-08, 03-10) of New York lasts 47 hours
    long springDay = at("2026-03-09T12:00:00Z");
    assertThat(LocalCalendar.periodStart(CalendarUnit.DAY, 2, springDay, NEW_YORK)).isEqualTo(at("2026-03-08T05:00:00Z"));
    long[] ends = LocalCalendar.periodEnds(CalendarUnit.DAY, 2, springDay, NEW_YORK);
    assertThat(ends[0]).isEqualTo(Duration.ofHours(47).toMillis());
    assertThat(ends[1] - ends[0]).isEqualTo(Duration.ofHours(48).toMillis());
    assertThat(ends[ends.length - 1]).isGreaterThanOrEqualTo(ends[0] + LocalCalendar.AHEAD_MS);
    // 2026-11-01 (epoch day 20758) starts a 3-day run of 73 hours (20758 = 3 * 6919 + 1: it starts 10-31)
    long fall = at("2026-11-01T12:00:00Z");
    long start = LocalCalendar.periodStart(CalendarUnit.DAY, 3, fall, NEW_YORK);
    assertThat(start).isEqualTo(at("2026-10-31T04:00:00Z"));
    assertThat(LocalCalendar.periodEnds(CalendarUnit.DAY, 3, fall, NEW_YORK)[0]).isEqualTo(Duration.ofHours(73).toMillis());
    // a run and a day of one zone are kept apart
    assertThat(LocalCalendar.periodStart(CalendarUnit.DAY, fall, NEW_YORK)).isEqualTo(at("2026-11-01T04:00:00Z"));
  }

  @Test
  void weeksStartOnMondayAndMonthsOnTheFirst() {
    long sunday = at("2026-03-08T12:00:00Z");
    assertThat(LocalCalendar.periodStart(CalendarUnit.WEEK, sunday, NEW_YORK)).isEqualTo(at("2026-03-02T05:00:00Z"));
    assertThat(LocalCalendar.periodEnd(CalendarUnit.WEEK, sunday, NEW_YORK)).isEqualTo(at("2026-03-09T04:00:00Z"));
    ZoneId london = ZoneId.of("Europe/London");
    long march = at("2026-03-31T23:30:00Z"); // 00:30 BST on April 1
    assertThat(LocalCalendar.periodStart(CalendarUnit.MONTH, march, london)).isEqualTo(at("2026-03-31T23:00:00Z"));
    assertThat(LocalCalendar.periodStart(CalendarUnit.MONTH, march - 3_600_000L, london))
        .isEqualTo(at("2026-03-01T00:00:00Z"));
    assertThat(LocalCalendar.periodEnd(CalendarUnit.MONTH, march - 3_600_000L, london))
        .isEqualTo(at("2026-03-31T23:00:00Z"));
  }

  @Test
  void aSkippedDayEndsTheDayBeforeAtTheNextMidnight() {
    ZoneId apia = ZoneId.of("Pacific/Apia"); // 2011-12-29 23:59:59 was followed by 2011-12-31 00:00
    long thursday = at("2011-12-29T12:00:00Z");
    assertThat(LocalCalendar.periodEnd(CalendarUnit.DAY, thursday, apia)).isEqualTo(at("2011-12-30T10:00:00Z"));
    assertThat(LocalCalendar.periodStart(CalendarUnit.DAY, at("2011-12-30T10:00:00Z"), apia))
        .isEqualTo(at("2011-12-30T10:00:00Z"));
  }
}
