package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.CalendarUnit;
import dev.fcap.model.SendWindow;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.TemporalAdjusters;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * {@link WindowSchedule} and {@link LocalCalendar} answer what a brute-force oracle answers from
 * java.time's local date and time, in zones with daylight saving (30 minutes on Lord Howe), half- and
 * quarter-hour offsets, midnight transitions and a skipped day (Apia, 2011-12-30), at random instants
 * and on and around offset transitions, for windows spanning midnight and with closed dates. The
 * oracle finds the next opening by walking the instants where the local time reaches a whole minute
 * or the offset changes, between which membership cannot change; {@code nextOpening} must equal it
 * to the millisecond.
 */
class SendWindowProperties {
  private static final List<String> ZONES = List.of("America/New_York", "Europe/London", "Asia/Kolkata",
      "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham", "Asia/Beirut", "America/Santiago",
      "Pacific/Apia", "America/Sao_Paulo", "Africa/Casablanca", "Europe/Dublin", "America/St_Johns", "Asia/Tehran",
      "America/Havana", "UTC");
  private static final List<String> ALL_ZONES = ZoneId.getAvailableZoneIds().stream().sorted().toList();
  private static final long FROM = LocalDate.of(1990, 1, 1).toEpochDay() * 86_400_000L;
  private static final long UNTIL = LocalDate.of(2036, 1, 1).toEpochDay() * 86_400_000L;
  private static final int[] TRICKY_MINUTES = {0, 30, 60, 90, 120, 150, 180, 1380, 1410, 1439, 45, 105};

  @Property(tries = 400)
  void membershipIsTheWallClocks(@ForAll long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    ZoneId zone = zone(random);
    long t0 = instant(random, zone);
    SendWindow w = window(random, zone, t0);
    WindowSchedule schedule = new WindowSchedule(w);
    for (int k = 0; k < 50; k++) {
      long t = near(random, zone, t0);
      assertThat(schedule.isOpen(t, zone)).as("%s at %s in %s", w, Instant.ofEpochMilli(t), zone)
          .isEqualTo(oracleOpen(w, t, zone));
    }
  }

  @Property(tries = 400)
  void theNextOpeningIsTheOraclesToTheMillisecond(@ForAll long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    ZoneId zone = zone(random);
    long t0 = instant(random, zone);
    SendWindow w = window(random, zone, t0);
    WindowSchedule schedule = new WindowSchedule(w);
    for (int k = 0; k < 4; k++) {
      long t = near(random, zone, t0);
      assertThat(schedule.nextOpening(t, zone)).as("%s from %s in %s", w, Instant.ofEpochMilli(t), zone)
          .isEqualTo(oracleNextOpening(w, t, zone));
    }
  }

  /**
   * Decisions as time moves on, as the engine makes them: instants in ascending order, mostly a few
   * minutes apart inside one shut span (where the span found first answers) and sometimes past its
   * opening or back before it.
   */
  @Property(tries = 200)
  void theNextOpeningHoldsAcrossAShutSpan(@ForAll long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    ZoneId zone = zone(random);
    long t = instant(random, zone);
    SendWindow w = window(random, zone, t);
    WindowSchedule schedule = new WindowSchedule(w);
    for (int k = 0; k < 6; k++) {
      assertThat(schedule.nextOpening(t, zone)).as("%s from %s in %s", w, Instant.ofEpochMilli(t), zone)
          .isEqualTo(oracleNextOpening(w, t, zone));
      t += switch (random.nextInt(4)) {
        case 0 -> random.nextLong(-3_600_000L, 0);
        case 1 -> random.nextLong(0, 2 * 86_400_000L);
        default -> random.nextLong(0, 20 * 60_000L);
      };
    }
  }

  @Property(tries = 400)
  void periodsAreTheLocalCalendars(@ForAll long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    ZoneId zone = zone(random);
    long t0 = instant(random, zone);
    for (int k = 0; k < 20; k++) {
      long t = near(random, zone, t0);
      for (CalendarUnit unit : CalendarUnit.values()) {
        long start = LocalCalendar.periodStart(unit, t, zone);
        long end = LocalCalendar.periodEnd(unit, t, zone);
        LocalDate date = LocalDateTime.ofInstant(Instant.ofEpochMilli(t), zone).toLocalDate();
        LocalDate first = switch (unit) {
          case DAY -> date;
          case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
          case MONTH -> date.withDayOfMonth(1);
        };
        LocalDate next = first.plus(1, unit.temporalUnit());
        long expectedStart = firstInstantOf(first, zone);
        long expectedEnd = firstInstantOf(next, zone);
        while (expectedEnd <= t) { // clocks went back across midnight: t lies in the next period
          first = next;
          next = next.plus(1, unit.temporalUnit());
          expectedStart = expectedEnd;
          expectedEnd = firstInstantOf(next, zone);
        }
        String what = unit + " at " + Instant.ofEpochMilli(t) + " in " + zone;
        assertThat(start).as(what).isEqualTo(expectedStart);
        assertThat(end).as(what).isEqualTo(expectedEnd);
        assertThat(start).as(what).isLessThanOrEqualTo(t);
        assertThat(end).as(what).isGreaterThan(t);
        assertThat(localDate(start, zone)).as(what).isEqualTo(first);
        assertThat(localDate(end, zone)).as(what).isAfterOrEqualTo(next); // after it when a day was skipped
      }
    }
  }

  /** The first instant whose local date is {@code date} or later, walking whole local minutes and transitions. */
  private static long firstInstantOf(LocalDate date, ZoneId zone) {
    long s = date.toEpochDay() * 86_400_000L - 20 * 3_600_000L;
    for (int i = 0; i < 3 * 1440; i++) {
      if (!localDate(s, zone).isBefore(date)) {
        return s;
      }
      s = nextStep(s, zone);
    }
    throw new AssertionError("no instant of " + date + " in " + zone);
  }

  private static LocalDate localDate(long t, ZoneId zone) {
    return LocalDateTime.ofInstant(Instant.ofEpochMilli(t), zone).toLocalDate();
  }

  static boolean oracleOpen(SendWindow w, long t, ZoneId zone) {
    LocalDateTime local = LocalDateTime.ofInstant(Instant.ofEpochMilli(t), zone);
    LocalTime time = local.toLocalTime();
    LocalDate date = local.toLocalDate();
    for (SendWindow.Interval i : w.allow()) {
      boolean open = i.from().isBefore(i.to())
          ? !time.isBefore(i.from()) && time.isBefore(i.to()) && opens(w, i, date)
          : !time.isBefore(i.from()) && opens(w, i, date) || time.isBefore(i.to()) && opens(w, i, date.minusDays(1));
      if (open) {
        return true;
      }
    }
    return false;
  }

  private static boolean opens(SendWindow w, SendWindow.Interval i, LocalDate date) {
    return i.days().contains(date.getDayOfWeek()) && !w.closed().contains(date);
  }

  /** Walks the instants where membership may change: local whole minutes and offset transitions. */
  static long oracleNextOpening(SendWindow w, long t, ZoneId zone) {
    long s = t;
    for (int i = 0; i < 60 * 1440; i++) {
      if (oracleOpen(w, s, zone)) {
        return s;
      }
      s = nextStep(s, zone);
    }
    throw new AssertionError("the oracle found no opening within 60 days of " + Instant.ofEpochMilli(t));
  }

  static long nextStep(long s, ZoneId zone) {
    ZoneRules rules = zone.getRules();
    Instant at = Instant.ofEpochMilli(s);
    long offset = rules.getOffset(at).getTotalSeconds() * 1000L;
    long nextMinute = Math.floorDiv(s + offset, 60_000L) * 60_000L + 60_000L - offset;
    ZoneOffsetTransition tr = rules.nextTransition(at);
    return tr == null ? nextMinute : Math.min(nextMinute, tr.toEpochSecond() * 1000L);
  }

  private static ZoneId zone(SplittableRandom random) {
    return ZoneId.of(random.nextInt(4) == 0
        ? ALL_ZONES.get(random.nextInt(ALL_ZONES.size())) : ZONES.get(random.nextInt(ZONES.size())));
  }

  /** A random instant, or one on or around one of the zone's transitions. */
  private static long instant(SplittableRandom random, ZoneId zone) {
    long t = random.nextLong(FROM, UNTIL);
    if (random.nextInt(3) > 0) {
      ZoneOffsetTransition tr = zone.getRules().nextTransition(Instant.ofEpochMilli(t));
      if (tr != null && tr.toEpochSecond() * 1000L < UNTIL) {
        return tr.toEpochSecond() * 1000L;
      }
    }
    return t;
  }

  /** An instant within a few hours of {@code t0}, sometimes exactly at it or a millisecond away. */
  private static long near(SplittableRandom random, ZoneId zone, long t0) {
    return switch (random.nextInt(5)) {
      case 0 -> t0;
      case 1 -> t0 + random.nextInt(-1, 2);
      case 2 -> t0 + random.nextLong(-3 * 3_600_000L, 3 * 3_600_000L);
      case 3 -> t0 + random.nextLong(-4 * 86_400_000L, 4 * 86_400_000L);
      default -> t0 + random.nextLong(-3, 4) * 1_800_000L + random.nextInt(-1, 2) * 60_000L;
    };
  }

  private static SendWindow window(SplittableRandom random, ZoneId zone, long t0) {
    List<SendWindow.Interval> allow = new ArrayList<>();
    int n = 1 + random.nextInt(3);
    for (int i = 0; i < n; i++) {
      Set<DayOfWeek> days = EnumSet.noneOf(DayOfWeek.class);
      if (random.nextInt(3) == 0) {
        days = EnumSet.allOf(DayOfWeek.class);
      } else {
        int k = 1 + random.nextInt(7);
        for (int j = 0; j < k; j++) {
          days.add(DayOfWeek.of(1 + random.nextInt(7)));
        }
      }
      int from = minute(random, zone, t0);
      int to = minute(random, zone, t0);
      if (from == to) {
        to = (to + 1 + random.nextInt(1439)) % 1440;
      }
      allow.add(new SendWindow.Interval(days, LocalTime.of(from / 60, from % 60), LocalTime.of(to / 60, to % 60)));
    }
    Set<LocalDate> closed = new HashSet<>();
    LocalDate day = localDate(t0, zone);
    int c = random.nextInt(4) == 0 ? 0 : random.nextInt(6);
    for (int i = 0; i < c; i++) {
      closed.add(day.plusDays(random.nextInt(-5, 10)));
    }
    return new SendWindow(random.nextBoolean() ? null : ZoneOffset.UTC, allow, closed);
  }

  /** A minute of the day: often one of the local times around a transition near {@code t0}. */
  private static int minute(SplittableRandom random, ZoneId zone, long t0) {
    ZoneOffsetTransition tr = zone.getRules().nextTransition(Instant.ofEpochMilli(t0 - 1));
    if (tr != null && random.nextBoolean()) {
      LocalTime edge = (random.nextBoolean() ? tr.getDateTimeBefore() : tr.getDateTimeAfter()).toLocalTime();
      int m = edge.toSecondOfDay() / 60 + random.nextInt(-90, 91);
      return Math.floorMod(m, 1440);
    }
    return random.nextBoolean() ? TRICKY_MINUTES[random.nextInt(TRICKY_MINUTES.length)] : random.nextInt(1440);
  }
}
