package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.RuleOutcome;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.memory.MemoryStore;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Send windows and recipient-zone calendars through the engine, on worked cases whose answers are
 * computed by hand (docs/algorithms.md, "Send windows and local calendars"): a refusal records
 * nothing, {@code sendAt} is the first instant every enforced rule admits, windows and counters
 * together, and each decision uses its own message's zone.
 */
class EngineSendWindowTest {
  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
  private static final ZoneId KOLKATA = ZoneId.of("Asia/Kolkata");

  private static Engine engine(String rules) {
    return Engine.builder(MemoryStore.builder().build()).callerTime(true).policies(PolicyParser.parse(rules)).build();
  }

  private static final String QUIET_HOURS = """
      policies:
        - tenant: default
          timeZone: America/New_York
          rules:
            - id: quiet-hours
              sendWindow:
                zone: recipient
                allow:
                  - {days: [mon, tue, wed, thu, fri], from: "08:00", to: "21:00"}
              match: {category: [marketing]}
            - id: two-per-hour
              limit: 2
              window: 1h
              key: [recipient]
      """;

  private static long at(String instant) {
    return Instant.parse(instant).toEpochMilli();
  }

  private static Message marketing(String recipient, ZoneId zone) {
    return Message.builder(recipient).category("marketing").content("sale").timeZone(zone).build();
  }

  @Test
  void aFridayNightMessageWaitsForMondayMorningAcrossTheSpringChangeAndRecordsNothing() {
    try (Engine engine = engine(QUIET_HOURS)) {
      // Friday 2026-03-06 22:00 EST; clocks go forward on Sunday the 8th, so Monday 08:00 is EDT (12:00Z)
      Decision d = engine.decideAt(marketing("+1", NEW_YORK), at("2026-03-07T03:00:00Z")).join();
      assertThat(d.allowed()).isFalse();
      assertThat(d.blockedBy()).containsExactly("quiet-hours");
      assertThat(d.sendAt()).isEqualTo(at("2026-03-09T12:00:00Z"));
      assertThat(d.retryAfterMs()).isEqualTo(at("2026-03-09T12:00:00Z") - at("2026-03-07T03:00:00Z"));
      assertThat(d.rules()).extracting(RuleOutcome::id).containsExactly("quiet-hours", "two-per-hour");
      // nothing was recorded: the hour's two are still free on Monday morning
      assertThat(engine.decideAt(marketing("+1", NEW_YORK), at("2026-03-09T12:00:00Z")).join().allowed()).isTrue();
      assertThat(engine.decideAt(marketing("+1", NEW_YORK), at("2026-03-09T12:00:01Z")).join().allowed()).isTrue();
      assertThat(engine.decideAt(marketing("+1", NEW_YORK), at("2026-03-09T12:00:02Z")).join().blockedBy())
          .containsExactly("two-per-hour");
    }
  }

  @Test
  void aCounterThatFreesInsideTheWindowSendsThenAndOneThatFreesAfterItWaitsForTheNextOpening() {
    try (Engine engine = engine(QUIET_HOURS)) {
      // Tuesday 2026-06-09, EDT: 19:59:30 and 20:00:10 local fill the hour
      engine.decideAt(marketing("+1", NEW_YORK), at("2026-06-09T23:59:30Z")).join();
      engine.decideAt(marketing("+1", NEW_YORK), at("2026-06-10T00:00:10Z")).join();
      Decision inside = engine.decideAt(marketing("+1", NEW_YORK), at("2026-06-10T00:30:00Z")).join();
      assertThat(inside.blockedBy()).containsExactly("two-per-hour");
      assertThat(inside.sendAt()).as("20:59:30 local, the window still open").isEqualTo(at("2026-06-10T00:59:30Z"));
      engine.decideAt(marketing("+2", NEW_YORK), at("2026-06-10T00:00:10Z")).join();
      engine.decideAt(marketing("+2", NEW_YORK), at("2026-06-10T00:00:10Z")).join();
      Decision after = engine.decideAt(marketing("+2", NEW_YORK), at("2026-06-10T00:30:00Z")).join();
      assertThat(after.sendAt()).as("frees at 21:00:10, so Wednesday 08:00 local").isEqualTo(at("2026-06-10T12:00:00Z"));
    }
  }

  @Test
  void eachDecisionUsesItsOwnMessagesZone() {
    try (Engine engine = engine(QUIET_HOURS)) {
      long t = at("2026-06-10T04:00:00Z"); // midnight in New York, 09:30 in Kolkata
      assertThat(engine.decideAt(marketing("+1", NEW_YORK), t).join().allowed()).isFalse();
      assertThat(engine.decideAt(marketing("+1", KOLKATA), t).join().allowed()).isTrue();
      assertThat(engine.decideAt(marketing("+1", null), t).join().allowed()).as("the policy's zone: New York").isFalse();
      Message notMarketing = Message.builder("+1").category("otp").content("1234").timeZone(NEW_YORK).build();
      assertThat(engine.decideAt(notMarketing, t).join().allowed()).as("the window does not match").isTrue();
    }
  }

  @Test
  void aLocalDayCapFollowsTheRecipientsMidnight() {
    String rules = """
        policies:
          - tenant: default
            rules:
              - id: one-per-local-day
                limit: 1
                window: 1d
                key: [recipient]
                algorithm: fixed-window
                zone: recipient
        """;
    try (Engine engine = engine(rules)) {
      // 23:30 and 23:45 on 2026-06-09 in Kolkata (UTC+5:30), then 00:05 on the 10th
      assertThat(engine.decideAt(marketing("+91", KOLKATA), at("2026-06-09T18:00:00Z")).join().allowed()).isTrue();
      Decision refused = engine.decideAt(marketing("+91", KOLKATA), at("2026-06-09T18:15:00Z")).join();
      assertThat(refused.blockedBy()).containsExactly("one-per-local-day");
      assertThat(refused.sendAt()).as("Kolkata's midnight").isEqualTo(at("2026-06-09T18:30:00Z"));
      assertThat(engine.decideAt(marketing("+91", KOLKATA), at("2026-06-09T18:35:00Z")).join().allowed()).isTrue();
      // a day of 23 hours: New York's 2026-03-08 runs from 05:00Z to 04:00Z the next day
      assertThat(engine.decideAt(marketing("+1", NEW_YORK), at("2026-03-08T05:00:00Z")).join().allowed()).isTrue();
      assertThat(engine.decideAt(marketing("+1", NEW_YORK), at("2026-03-09T03:59:59Z")).join().sendAt())
          .isEqualTo(at("2026-03-09T04:00:00Z"));
      assertThat(engine.decideAt(marketing("+1", NEW_YORK), at("2026-03-09T04:00:00Z")).join().allowed()).isTrue();
    }
  }

  @Test
  void aReplayReportsTheWindowAndRecordsNothingWhileItIsShut() {
    Engine engine = Engine.builder(MemoryStore.builder().build()).callerTime(true)
        .releaseHorizon(java.time.Duration.ZERO).policies(PolicyParser.parse(QUIET_HOURS)).build();
    try (engine) {
      List<String> reported = new ArrayList<>();
      boolean admitted = engine.decideAt(marketing("+1", NEW_YORK), at("2026-03-07T03:00:00Z"),
          (rule, allowed, enforced) -> reported.add(rule + "=" + allowed)).join();
      assertThat(admitted).isFalse();
      assertThat(reported).containsExactly("0=false", "1=true");
      for (int i = 0; i < 2; i++) {
        assertThat(engine.decideAt(marketing("+1", NEW_YORK), at("2026-03-09T12:00:00Z"), (r, a, e) -> { }).join()).isTrue();
      }
    }
  }
}
