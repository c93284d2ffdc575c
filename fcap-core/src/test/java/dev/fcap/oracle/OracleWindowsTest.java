package dev.fcap.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Condition;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.SendWindow;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The oracle itself on cases computed by hand from the documented definitions (docs/algorithms.md,
 * "Send windows and local calendars"), across daylight-saving changes and in half- and
 * quarter-hour zones: each expected instant below is worked out from the zone's offsets, not taken
 * from any implementation.
 */
class OracleWindowsTest {
  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
  private static final ZoneId LONDON = ZoneId.of("Europe/London");
  private static final ZoneId KOLKATA = ZoneId.of("Asia/Kolkata");
  private static final Set<DayOfWeek> WEEKDAYS = EnumSet.range(DayOfWeek.MONDAY, DayOfWeek.FRIDAY);
  private static final Set<DayOfWeek> EVERY_DAY = EnumSet.allOf(DayOfWeek.class);

  private static long at(String instant) {
    return Instant.parse(instant).toEpochMilli();
  }

  private static Rule window(String id, ZoneId zone, Set<DayOfWeek> days, String from, String to, LocalDate... closed) {
    SendWindow w = new SendWindow(zone, List.of(new SendWindow.Interval(days, LocalTime.parse(from), LocalTime.parse(to))),
        Set.of(closed));
    return Rule.ofSendWindow(id, null, w, null, null, Mode.ENFORCE);
  }

  private static Rule calendar(String id, long limit, CalendarUnit unit) {
    return new Rule(id, null, limit, unit.nominal(), List.of(Dimension.RECIPIENT), null, null, Algorithm.FIXED_WINDOW,
        0, Mode.ENFORCE, null, true, unit, null);
  }

  private static Message to(ZoneId zone) {
    return Message.builder("r1").category("marketing").timeZone(zone).build();
  }

  private static Decision decide(Oracle oracle, Message m, long time) {
    return oracle.decide(m, time, false, null, "d" + time).expected();
  }

  @Test
  void aFridayNightRefusalInNewYorkSendsOnMondayAtEightEdtAcrossTheSpringChange() {
    Oracle oracle = new Oracle(new Policy("default", 1, List.of(window("quiet", null, WEEKDAYS, "08:00", "21:00"))));
    // Friday 2026-03-06 22:00 EST; Monday 2026-03-09 08:00 is EDT (-4) since Sunday: 12:00 UTC
    Decision d = decide(oracle, to(NEW_YORK), at("2026-03-07T03:00:00Z"));
    assertThat(d.allowed()).isFalse();
    assertThat(d.blockedBy()).containsExactly("quiet");
    assertThat(d.sendAt()).isEqualTo(at("2026-03-09T12:00:00Z"));
    assertThat(d.retryAfterMs()).isEqualTo(205_200_000L);
    assertThat(d.rules().get(0).sendAt()).isEqualTo(at("2026-03-09T12:00:00Z"));
    // inside on Monday 08:00 EDT, outside a millisecond before
    assertThat(decide(oracle, to(NEW_YORK), at("2026-03-09T12:00:00Z")).allowed()).isTrue();
    assertThat(decide(oracle, to(NEW_YORK), at("2026-03-09T11:59:59.999Z")).sendAt()).isEqualTo(at("2026-03-09T12:00:00Z"));
  }

  @Test
  void aWindowOpeningInTheSpringGapOpensWhenTheGapEndsAndOneWhollyInsideItWaitsADay() {
    // New York 2026-03-08: 02:00 EST (07:00 UTC) jumps to 03:00 EDT
    Oracle partly = new Oracle(new Policy("default", 1, List.of(window("w", NEW_YORK, EVERY_DAY, "02:30", "04:00"))));
    assertThat(decide(partly, to(null), at("2026-03-08T06:00:00Z")).sendAt()).isEqualTo(at("2026-03-08T07:00:00Z"));
    assertThat(decide(partly, to(null), at("2026-03-08T07:59:00Z")).allowed()).isTrue();
    assertThat(decide(partly, to(null), at("2026-03-08T08:00:00Z")).sendAt()).isEqualTo(at("2026-03-09T06:30:00Z"));
    Oracle inside = new Oracle(new Policy("default", 1, List.of(window("w", NEW_YORK, EVERY_DAY, "02:10", "02:50"))));
    assertThat(decide(inside, to(null), at("2026-03-08T06:00:00Z")).sendAt()).isEqualTo(at("2026-03-09T06:10:00Z"));
  }

  @Test
  void aLocalTimeThatOccursTwiceIsInsideBothTimes() {
    // New York 2026-11-01: 02:00 EDT (06:00 UTC) goes back to 01:00 EST
    Oracle oracle = new Oracle(new Policy("default", 1, List.of(window("w", null, EVERY_DAY, "01:00", "01:30"))));
    assertThat(decide(oracle, to(NEW_YORK), at("2026-11-01T05:10:00Z")).allowed()).isTrue();
    assertThat(decide(oracle, to(NEW_YORK), at("2026-11-01T05:30:00Z")).sendAt()).isEqualTo(at("2026-11-01T06:00:00Z"));
    assertThat(decide(oracle, to(NEW_YORK), at("2026-11-01T06:29:59.999Z")).allowed()).isTrue();
  }

  @Test
  void halfAndQuarterHourZonesAndLordHowesHalfHourChange() {
    Oracle kathmandu = new Oracle(new Policy("default", 1,
        List.of(window("w", ZoneId.of("Asia/Kathmandu"), EVERY_DAY, "09:00", "10:00"))));
    assertThat(decide(kathmandu, to(null), at("2026-01-05T03:00:00Z")).sendAt()).isEqualTo(at("2026-01-05T03:15:00Z"));
    // Lord Howe 2026-10-04 02:00 (+10:30, 15:30 UTC on the 3rd) springs to 02:30 (+11): 02:00-02:20 never opens
    // that day; on the 5th it opens at 02:00 +11, 15:00 UTC on the 4th
    Oracle lordHowe = new Oracle(new Policy("default", 1,
        List.of(window("w", ZoneId.of("Australia/Lord_Howe"), EVERY_DAY, "02:00", "02:20"))));
    assertThat(decide(lordHowe, to(null), at("2026-10-03T15:00:00Z")).sendAt()).isEqualTo(at("2026-10-04T15:00:00Z"));
  }

  @Test
  void anIntervalSpanningMidnightBelongsToTheDateItOpenedAndAClosedDateClosesItsNight() {
    // Saturday 2026-01-03 22:00 to Sunday 02:00, UTC; Saturday 2026-01-10 is closed
    Oracle oracle = new Oracle(new Policy("default", 1, List.of(window("w", null, EnumSet.of(DayOfWeek.SATURDAY),
        "22:00", "02:00", LocalDate.parse("2026-01-10")))));
    assertThat(decide(oracle, to(null), at("2026-01-04T01:00:00Z")).allowed()).isTrue();
    assertThat(decide(oracle, to(null), at("2026-01-04T02:00:00Z")).sendAt()).isEqualTo(at("2026-01-17T22:00:00Z"));
  }

  @Test
  void aCounterFreeingInsideTheWindowGivesItsInstantAndOneFreeingAfterItGivesTheNextOpening() {
    Rule perMinute = Rule.of("perMinute", 1, Duration.ofMinutes(1), Dimension.RECIPIENT);
    Oracle oracle = new Oracle(new Policy("default", 1,
        List.of(window("w", null, EVERY_DAY, "08:00", "21:00"), perMinute)));
    assertThat(decide(oracle, to(null), at("2026-01-05T20:58:30Z")).allowed()).isTrue();
    Decision refused = decide(oracle, to(null), at("2026-01-05T20:59:00Z"));
    assertThat(refused.blockedBy()).containsExactly("perMinute");
    assertThat(refused.sendAt()).isEqualTo(at("2026-01-05T20:59:30Z"));
    assertThat(refused.retryAfterMs()).isEqualTo(30_000);

    Oracle late = new Oracle(new Policy("default", 1, List.of(window("w", null, EVERY_DAY, "08:00", "21:00"), perMinute)));
    assertThat(decide(late, to(null), at("2026-01-05T20:59:10Z")).allowed()).isTrue();
    assertThat(decide(late, to(null), at("2026-01-05T20:59:20Z")).sendAt()).isEqualTo(at("2026-01-06T08:00:00Z"));
    // a refusal outside the window records nothing: the morning's first message is admitted
    assertThat(decide(late, to(null), at("2026-01-05T21:00:05Z")).allowed()).isFalse();
    assertThat(decide(late, to(null), at("2026-01-06T08:00:00Z")).allowed()).isTrue();
  }

  @Test
  void twoWindowsInTwoZonesAreOpenTogetherOnlyWhereTheyOverlap() {
    // 08:00-09:00 New York and 12:30-13:00 London: in winter 13:00-14:00 and 12:30-13:00 UTC, from
    // 2026-03-29 12:00-13:00 and 11:30-12:00 UTC; only from 2026-03-08 (New York on EDT, London still
    // on GMT) to 2026-03-28 do they meet, at 12:30 UTC
    Oracle oracle = new Oracle(new Policy("default", 1, List.of(window("ny", NEW_YORK, EVERY_DAY, "08:00", "09:00"),
        window("london", LONDON, EVERY_DAY, "12:30", "13:00"))));
    Decision d = decide(oracle, to(null), at("2026-03-01T00:00:00Z"));
    assertThat(d.sendAt()).isEqualTo(at("2026-03-08T12:30:00Z"));
    // from 2026-03-29 on they next meet when London has gone back and New York not yet (2026-10-25)
    assertThat(decide(oracle, to(null), at("2026-03-29T12:31:00Z")).sendAt()).isEqualTo(at("2026-10-25T12:30:00Z"));
    assertThat(d.blockedBy()).containsExactly("ny", "london");
  }

  @Test
  void recipientDaysOf23HoursAreWholeAndAZoneChangeStartsTheCountOfAnotherPeriod() {
    Oracle oracle = new Oracle(new Policy("default", 1, List.of(calendar("daily", 1, CalendarUnit.DAY))));
    // New York's 2026-03-08 is [05:00 UTC, 04:00 UTC the next day)
    assertThat(decide(oracle, to(NEW_YORK), at("2026-03-08T05:00:00Z")).allowed()).isTrue();
    Decision late = decide(oracle, to(NEW_YORK), at("2026-03-09T03:59:59Z"));
    assertThat(late.allowed()).isFalse();
    assertThat(late.sendAt()).isEqualTo(at("2026-03-09T04:00:00Z"));
    // the same instant in Kolkata is 2026-03-09 09:29:59 IST: another period, a new count
    assertThat(decide(oracle, to(KOLKATA), at("2026-03-09T03:59:59Z")).allowed()).isTrue();
  }

  @Test
  void aCountCarriesIntoAnotherZonesPeriodOnlyWhileThePeriodItWasCountedInLasts() {
    Oracle oracle = new Oracle(new Policy("default", 1, List.of(calendar("monthly", 1, CalendarUnit.MONTH))));
    // New York's January holds 2026-01-05T12:00Z; Kolkata's January (from 2025-12-31T18:30Z) holds it too
    assertThat(decide(oracle, to(NEW_YORK), at("2026-01-05T12:00:00Z")).allowed()).isTrue();
    Decision kolkata = decide(oracle, to(KOLKATA), at("2026-01-05T13:00:00Z"));
    assertThat(kolkata.allowed()).isFalse();
    assertThat(kolkata.sendAt()).isEqualTo(at("2026-01-31T18:30:00Z"));

    // counted in New York's December (it ends 2026-01-01T05:00Z), the count is gone after that, though
    // Lord Howe's January (from 2025-12-31T13:00Z) holds the message
    Oracle december = new Oracle(new Policy("default", 1, List.of(calendar("monthly", 1, CalendarUnit.MONTH))));
    assertThat(decide(december, to(NEW_YORK), at("2026-01-01T00:10:00Z")).allowed()).isTrue();
    assertThat(decide(december, to(ZoneId.of("Australia/Lord_Howe")), at("2026-01-01T04:59:00Z")).allowed()).isFalse();
    assertThat(decide(december, to(ZoneId.of("Australia/Lord_Howe")), at("2026-01-03T00:24:00Z")).allowed()).isTrue();
  }

  @Test
  void weeksStartOnMondayAndMonthsOnTheFirstLocalMidnight() {
    Oracle weekly = new Oracle(new Policy("default", 1, List.of(calendar("weekly", 2, CalendarUnit.WEEK)), NEW_YORK));
    // Thursday 2026-03-05 EST, twice; the week ends Monday 2026-03-09 00:00 EDT = 04:00 UTC
    assertThat(decide(weekly, to(null), at("2026-03-05T15:00:00Z")).allowed()).isTrue();
    assertThat(decide(weekly, to(null), at("2026-03-06T15:00:00Z")).allowed()).isTrue();
    assertThat(decide(weekly, to(null), at("2026-03-08T15:00:00Z")).sendAt()).isEqualTo(at("2026-03-09T04:00:00Z"));
    Oracle monthly = new Oracle(new Policy("default", 1, List.of(calendar("monthly", 1, CalendarUnit.MONTH))));
    // Kolkata: April starts 2026-03-31T18:30Z
    assertThat(decide(monthly, to(KOLKATA), at("2026-03-02T00:00:00Z")).allowed()).isTrue();
    assertThat(decide(monthly, to(KOLKATA), at("2026-03-31T18:29:00Z")).sendAt()).isEqualTo(at("2026-03-31T18:30:00Z"));
  }

  @Test
  void aCostAboveALimitNeverSendsAndAShadowWindowNeverBlocks() {
    Rule shadow = window("night", null, EVERY_DAY, "22:00", "06:00").withMode(Mode.SHADOW);
    Oracle oracle = new Oracle(new Policy("default", 1, List.of(shadow, calendar("daily", 3, CalendarUnit.DAY),
        window("w", null, EVERY_DAY, "08:00", "21:00").withMatch(new Condition(Map.of(Dimension.CATEGORY,
            Set.of("marketing")))))));
    Decision d = decide(oracle, Message.builder("r1").category("service").build(), at("2026-01-05T12:00:00Z"));
    assertThat(d.allowed()).isTrue();
    assertThat(d.shadowBlockedBy()).containsExactly("night");
    Decision never = decide(oracle, to(null).withCost(4), at("2026-01-05T22:00:00Z"));
    assertThat(never.blockedBy()).containsExactly("daily", "w");
    assertThat(never.sendAt()).isEqualTo(-1);
    assertThat(never.retryAfterMs()).isEqualTo(-1);
  }
}
