package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Condition;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.MemoryStore;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Inspection lists every send window of the recipient's policy, open or shut at the store's time in
 * the zone asked for (else the policy's, else UTC), and reads recipient-zone calendar counters in that
 * zone too.
 */
class InspectorWindowsTest {
  private static final ZoneId TOKYO = ZoneId.of("Asia/Tokyo");
  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
  private static final ZoneId KOLKATA = ZoneId.of("Asia/Kolkata");
  /** Monday 2026-03-09 13:00 UTC: 09:00 in New York (daylight time since Sunday), 22:00 in Tokyo. */
  private static final long MONDAY = at("2026-03-09T13:00:00Z");
  private static final String RULES = """
      policies:
        - tenant: default
          timeZone: Asia/Tokyo
          rules:
            - id: business-hours
              sendWindow:
                allow: [{days: [mon, tue, wed, thu, fri], from: "08:00", to: "21:00"}]
              match: {category: [marketing]}
              exempt: {channel: [email]}
            - {id: daily, limit: 3, window: 1d, key: [recipient], algorithm: fixed-window, zone: recipient}
            - id: london-office
              mode: shadow
              sendWindow:
                zone: Europe/London
                allow: [{from: "09:00", to: "17:00"}]
        - tenant: plain
          rules:
            - id: nights
              sendWindow:
                allow: [{from: "22:00", to: "06:00"}]
      """;

  private static long at(String instant) {
    return Instant.parse(instant).toEpochMilli();
  }

  private static Engine engine(ManualClock clock) {
    return Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock)
        .policies(PolicyParser.parse(RULES)).build();
  }

  @Test
  void theSameInstantIsShutInThePolicysZoneAndOpenInTheZoneAsked() {
    try (Engine engine = engine(new ManualClock(MONDAY))) {
      Inspection tokyo = engine.inspect("default", "r1").join();
      assertThat(tokyo.timeZone()).isEqualTo(TOKYO);
      assertThat(tokyo.windows()).extracting(WindowView::ruleId).containsExactly("business-hours", "london-office");
      WindowView shut = tokyo.windows().get(0);
      assertThat(shut.zone()).isEqualTo(TOKYO);
      assertThat(shut.open()).isFalse();
      assertThat(shut.enforced()).isTrue();
      assertThat(shut.opensAt()).isEqualTo(at("2026-03-09T23:00:00Z")); // Tuesday 08:00 in Tokyo
      assertThat(shut.match()).isEqualTo(new Condition(Map.of(Dimension.CATEGORY, Set.of("marketing"))));
      assertThat(shut.exempt()).isEqualTo(new Condition(Map.of(Dimension.CHANNEL, Set.of("email"))));
      WindowView london = tokyo.windows().get(1);
      assertThat(london.zone()).isEqualTo(ZoneId.of("Europe/London"));
      assertThat(london.enforced()).isFalse();
      assertThat(london.open()).isTrue();
      assertThat(london.opensAt()).isEqualTo(MONDAY);
      assertThat(london.match().isEmpty()).isTrue();

      Inspection newYork = engine.inspect("default", "r1", NEW_YORK).join();
      assertThat(newYork.timeZone()).isEqualTo(NEW_YORK);
      assertThat(newYork.windows().get(0).zone()).isEqualTo(NEW_YORK);
      assertThat(newYork.windows().get(0).open()).isTrue();
      assertThat(newYork.windows().get(0).opensAt()).isEqualTo(MONDAY);
      assertThat(newYork.windows().get(1).zone()).isEqualTo(ZoneId.of("Europe/London"));
    }
  }

  @Test
  void aWeekendsNextOpeningFallsAfterTheChangeToDaylightSaving() {
    // Saturday 2026-03-07 15:00 UTC, 10:00 EST: Monday 08:00 is EDT, 12:00 UTC
    try (Engine engine = engine(new ManualClock(at("2026-03-07T15:00:00Z")))) {
      WindowView w = engine.inspect("default", "r2", NEW_YORK).join().windows().get(0);
      assertThat(w.open()).isFalse();
      assertThat(w.opensAt()).isEqualTo(at("2026-03-09T12:00:00Z"));
    }
  }

  @Test
  void aRecipientZoneCalendarCounterIsReadInTheZoneAsked() {
    // 01:30 on Tuesday in Kolkata: the counter of that local day holds the message
    ManualClock clock = new ManualClock(at("2026-03-09T20:00:00Z"));
    try (Engine engine = engine(clock)) {
      Message m = Message.builder("r3").channel("sms").timeZone(KOLKATA).build();
      assertThat(engine.decide(m).join().allowed()).isTrue();
      CounterView daily = engine.inspect("default", "r3", KOLKATA).join().counters().stream()
          .filter(c -> c.ruleId().equals("daily")).findFirst().orElseThrow();
      assertThat(daily.used()).isEqualTo(1);
      assertThat(daily.remaining()).isEqualTo(2);
    }
  }

  @Test
  void withoutAPolicyZoneUtcIsReadAndWithoutAPolicyNothingIsListed() {
    // 23:00 UTC: inside 22:00-06:00 in UTC
    try (Engine engine = engine(new ManualClock(at("2026-03-09T23:00:00Z")))) {
      Inspection plain = engine.inspect("plain", "r4").join();
      assertThat(plain.timeZone()).isEqualTo(ZoneOffset.UTC);
      assertThat(plain.windows()).singleElement().satisfies(w -> assertThat(w.open()).isTrue());
      // in Tokyo it is 08:00 the next morning: shut until 22:00 local, 13:00 UTC
      WindowView tokyo = engine.inspect("plain", "r4", TOKYO).join().windows().get(0);
      assertThat(tokyo.open()).isFalse();
      assertThat(tokyo.opensAt()).isEqualTo(at("2026-03-10T13:00:00Z"));
      Inspection none = engine.inspect("nobody", "r4").join();
      assertThat(none.windows()).isEmpty();
      assertThat(none.timeZone()).isEqualTo(ZoneOffset.UTC);
    }
  }

  @Test
  void anInspectionOfCountersAloneHasNoWindows() {
    Inspection i = new Inspection("t", "r", 1, 2, List.of());
    assertThat(i.windows()).isEmpty();
    assertThat(i.timeZone()).isEqualTo(ZoneOffset.UTC);
  }
}
