package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.CalendarUnit;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The per-zone caches of {@link ZoneOffsets} and {@link LocalCalendar} answer right when threads ask
 * about the same zones at instants years apart, each thread replacing the span or period another
 * just cached: every answer is checked against java.time.
 */
class ZoneCachesConcurrencyTest {
  private static final ZoneId[] ZONES = {ZoneId.of("America/New_York"), ZoneId.of("Australia/Lord_Howe"),
      ZoneId.of("Asia/Kathmandu")};

  @Test
  void threadsThatEvictEachOthersSpansStillAnswerRight() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int thread = 0; thread < 4; thread++) {
        long seed = thread;
        results.add(pool.submit(() -> wrongAnswers(new SplittableRandom(seed), 20_000)));
      }
      for (Future<Integer> f : results) {
        assertThat(f.get(60, TimeUnit.SECONDS)).isZero();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static int wrongAnswers(SplittableRandom random, int lookups) {
    int wrong = 0;
    long from = LocalDate.of(2000, 1, 1).toEpochDay() * 86_400_000L;
    long until = LocalDate.of(2040, 1, 1).toEpochDay() * 86_400_000L;
    for (int i = 0; i < lookups; i++) {
      ZoneId zone = ZONES[random.nextInt(ZONES.length)];
      long t = random.nextLong(from, until);
      Instant at = Instant.ofEpochMilli(t);
      if (ZoneOffsets.offsetMs(zone, t) != zone.getRules().getOffset(at).getTotalSeconds() * 1000L) {
        wrong++;
      }
      LocalDate monday = LocalDateTime.ofInstant(at, zone).toLocalDate()
          .with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
      if (LocalCalendar.periodStart(CalendarUnit.WEEK, t, zone) != monday.atStartOfDay(zone).toEpochSecond() * 1000L) {
        wrong++;
      }
    }
    return wrong;
  }
}
