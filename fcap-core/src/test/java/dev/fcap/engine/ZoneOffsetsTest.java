package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ZoneOffsets} answers java.time's offset on both sides of every transition of every zone, asked
 * in the order that tests the cached span's edges: on the transition, then just before it (a span
 * cached from the transition must not reach back past it), then just after.
 */
class ZoneOffsetsTest {
  private static final Instant FROM = Instant.parse("1800-01-01T00:00:00Z");
  private static final Instant UNTIL = Instant.parse("2040-01-01T00:00:00Z");

  @Test
  void everyTransitionOfEveryZoneFromEitherSide() {
    List<String> wrong = new ArrayList<>();
    int asked = 0;
    for (String id : ZoneId.getAvailableZoneIds()) {
      ZoneId zone = ZoneId.of(id);
      ZoneRules rules = zone.getRules();
      for (ZoneOffsetTransition tr = rules.nextTransition(FROM); tr != null && tr.getInstant().isBefore(UNTIL);
          tr = rules.nextTransition(tr.getInstant())) {
        long at = tr.toEpochSecond() * 1000L;
        for (long t : new long[] {at, at - 1, at, at + 1, at - 1}) {
          asked++;
          long expected = rules.getOffset(Instant.ofEpochMilli(t)).getTotalSeconds() * 1000L;
          if (ZoneOffsets.offsetMs(zone, t) != expected && wrong.size() < 10) {
            wrong.add(id + " at " + Instant.ofEpochMilli(t));
          }
        }
      }
    }
    assertThat(asked).isGreaterThan(100_000);
    assertThat(wrong).isEmpty();
  }

  /** Troll's first transition is its first spring: a span cached there once answered +02:00 for the winter before it. */
  @Test
  void aZonesFirstTransitionDoesNotReachBackIntoTheOffsetBeforeIt() {
    ZoneId troll = ZoneId.of("Antarctica/Troll");
    long spring = Instant.parse("2005-03-27T01:00:00Z").toEpochMilli();
    assertThat(troll.getRules().previousTransition(Instant.ofEpochMilli(spring))).isNull();
    assertThat(ZoneOffsets.offsetMs(troll, spring)).isEqualTo(2 * 3_600_000L);
    assertThat(ZoneOffsets.offsetMs(troll, spring - 1)).isZero();
    assertThat(ZoneOffsets.offsetMs(troll, spring)).isEqualTo(2 * 3_600_000L);
  }
}
