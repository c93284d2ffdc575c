package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.SendWindow;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * {@link SendAt#earliest} is the first instant at which every window is open at once, each by its own
 * zone's clock, as a brute-force walk finds it: over the instants where any zone's local time reaches
 * a whole minute or changes offset, between which no window opens or closes.
 */
class SendAtProperties {
  private static final List<String> ZONES = List.of("America/New_York", "Europe/London", "Asia/Kolkata",
      "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham", "UTC");
  private static final List<String> DAYLIGHT_SAVING = List.of("America/New_York", "Europe/London",
      "Australia/Lord_Howe", "Pacific/Chatham");
  private static final int ORACLE_DAYS = 20;

  @Property(tries = 200)
  void theEarliestInstantEveryWindowAdmitsIsTheOracles(@ForAll long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int count = 1 + random.nextInt(3);
    WindowSchedule[] windows = new WindowSchedule[count];
    ZoneId[] zones = new ZoneId[count];
    SendWindow[] models = new SendWindow[count];
    long from = random.nextLong(LocalDate.of(2020, 1, 1).toEpochDay() * 86_400_000L,
        LocalDate.of(2030, 1, 1).toEpochDay() * 86_400_000L);
    if (random.nextBoolean()) {
      ZoneOffsetTransition tr = ZoneId.of(DAYLIGHT_SAVING.get(random.nextInt(DAYLIGHT_SAVING.size()))).getRules()
          .nextTransition(Instant.ofEpochMilli(from));
      from = tr.toEpochSecond() * 1000L + random.nextLong(-6 * 3_600_000L, 6 * 3_600_000L);
    }
    for (int i = 0; i < count; i++) {
      zones[i] = ZoneId.of(ZONES.get(random.nextInt(ZONES.size())));
      int start = random.nextInt(1440);
      int length = 30 + random.nextInt(1200);
      int end = (start + length) % 1440;
      Set<DayOfWeek> days = random.nextInt(3) == 0 ? EnumSet.allOf(DayOfWeek.class)
          : EnumSet.range(DayOfWeek.MONDAY, DayOfWeek.of(1 + random.nextInt(7)));
      models[i] = new SendWindow(null, List.of(new SendWindow.Interval(days, LocalTime.of(start / 60, start % 60),
          LocalTime.of(end / 60, end % 60))), Set.of());
      windows[i] = new WindowSchedule(models[i]);
    }
    long expected = oracle(models, zones, from);
    long actual = SendAt.earliest(from, windows, zones, count);
    if (expected >= 0) {
      assertThat(actual).as("from %s", Instant.ofEpochMilli(from)).isEqualTo(expected);
    } else {
      assertThat(actual == -1 || actual > from + ORACLE_DAYS * 86_400_000L).as("from %s: %s",
          Instant.ofEpochMilli(from), actual).isTrue();
    }
  }

  @Test
  void aCounterThatFreesInsideTheWindowSendsThenAndOneThatFreesAfterItWaitsForEveryWindow() {
    ZoneId utc = ZoneOffset.UTC;
    WindowSchedule evenings = new WindowSchedule(new SendWindow(null, List.of(new SendWindow.Interval(
        EnumSet.allOf(DayOfWeek.class), LocalTime.of(8, 0), LocalTime.of(21, 0))), Set.of()));
    WindowSchedule late = new WindowSchedule(new SendWindow(null, List.of(new SendWindow.Interval(
        EnumSet.allOf(DayOfWeek.class), LocalTime.of(9, 0), LocalTime.of(23, 0))), Set.of()));
    WindowSchedule[] both = {evenings, late};
    ZoneId[] zones = {utc, utc};
    long insideWindow = Instant.parse("2026-06-01T20:59:30Z").toEpochMilli();
    assertThat(SendAt.earliest(insideWindow, both, zones, 2)).isEqualTo(insideWindow);
    long afterWindow = Instant.parse("2026-06-01T21:00:10Z").toEpochMilli();
    assertThat(SendAt.earliest(afterWindow, both, zones, 2)).isEqualTo(Instant.parse("2026-06-02T09:00:00Z")
        .toEpochMilli());
    assertThat(SendAt.earliest(-1, both, zones, 2)).isEqualTo(-1);
    WindowSchedule mondays = new WindowSchedule(new SendWindow(null, List.of(new SendWindow.Interval(
        EnumSet.of(DayOfWeek.MONDAY), LocalTime.of(8, 0), LocalTime.of(9, 0))), Set.of()));
    WindowSchedule tuesdays = new WindowSchedule(new SendWindow(null, List.of(new SendWindow.Interval(
        EnumSet.of(DayOfWeek.TUESDAY), LocalTime.of(8, 0), LocalTime.of(9, 0))), Set.of()));
    assertThat(SendAt.earliest(afterWindow, new WindowSchedule[] {mondays, tuesdays}, zones, 2)).isEqualTo(-1);
  }

  private static long oracle(SendWindow[] windows, ZoneId[] zones, long from) {
    long s = from;
    long limit = from + ORACLE_DAYS * 86_400_000L;
    while (s <= limit) {
      boolean all = true;
      for (int i = 0; i < windows.length && all; i++) {
        all = SendWindowProperties.oracleOpen(windows[i], s, zones[i]);
      }
      if (all) {
        return s;
      }
      long next = Long.MAX_VALUE;
      for (ZoneId zone : zones) {
        next = Math.min(next, SendWindowProperties.nextStep(s, zone));
      }
      s = next;
    }
    return -1;
  }
}
