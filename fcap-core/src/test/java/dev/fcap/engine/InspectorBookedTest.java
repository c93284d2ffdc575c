package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Decision;
import dev.fcap.model.Defer;
import dev.fcap.model.Message;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.MemoryStore;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Inspection lists the messages booked after the store's time: one entry per counter a deferred
 * message is recorded in, named by the rules that read it, by time then policy order; an entry whose
 * time has come is no longer booked, and a released booking is gone.
 */
class InspectorBookedTest {
  private static final long T0 = 1_780_000_000_000L;
  private static final long HOUR = 3_600_000;
  private static final String RULES = """
      policies:
        - tenant: default
          rules:
            - {id: per-hour, limit: 1, window: 1h, key: [recipient]}
            - {id: per-day, limit: 3, window: 1d, key: [recipient]}
            - {id: same-content, limit: 1, window: 1h, key: [recipient, content]}
      """;

  private static Engine engine(ManualClock clock) {
    return Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock)
        .policies(PolicyParser.parse(RULES)).build();
  }

  @Test
  void aDeferredMessageIsListedInEachCounterItIsBookedInUntilItsTimeComes() {
    ManualClock clock = new ManualClock(T0);
    try (Engine engine = engine(clock)) {
      Message m = Message.builder("r1").content("hello").build();
      assertThat(engine.decide(m).join().allowed()).isTrue();
      clock.advance(60_000);
      Decision booked = engine.decide(m.withDefer(Defer.BY_DEFAULT)).join();
      assertThat(booked.deferred()).isTrue();
      assertThat(booked.sendAt()).isEqualTo(T0 + HOUR);

      List<BookedView> entries = engine.inspect("default", "r1").join().booked();
      assertThat(entries).extracting(BookedView::time).containsExactly(T0 + HOUR, T0 + HOUR);
      assertThat(entries.get(0).rules()).containsExactly("per-hour", "per-day");
      assertThat(entries.get(0).values()).isEmpty();
      assertThat(entries.get(1).rules()).containsExactly("same-content");
      assertThat(entries.get(1).values()).containsOnlyKeys("content");
      assertThat(entries).extracting(BookedView::cost).containsOnly(1L);
      assertThat(engine.inspect("default", "nobody").join().booked()).isEmpty();

      clock.advance(HOUR);
      assertThat(engine.inspect("default", "r1").join().booked()).as("its time has come").isEmpty();
    }
  }

  /**
   * A fixed window lists each later window it holds bookings in, at its latest booked instant, with
   * the cost booked there; bookings in the current window count in its {@code used}.
   */
  @Test
  void aFixedWindowListsItsLaterWindowsWithTheirBookedCost() {
    ManualClock clock = new ManualClock(T0);
    try (Engine engine = Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock)
        .policies(PolicyParser.parse("""
            policies:
              - tenant: default
                rules:
                  - {id: two-per-hour, limit: 2, window: 1h, key: [recipient], algorithm: fixed-window}
            """)).build()) {
      long hourStart = Math.floorDiv(T0, HOUR) * HOUR;
      Message m = Message.builder("r3").defer(Defer.until(java.time.Instant.ofEpochMilli(T0 + 5 * HOUR))).build();
      long[] sendAt = new long[6];
      for (int i = 0; i < 6; i++) {
        sendAt[i] = engine.decide(m).join().sendAt();
      }
      // two admitted now (sendAt 0), then two booked at each of the next two hours' starts
      assertThat(sendAt).containsExactly(0, 0, hourStart + HOUR, hourStart + HOUR, hourStart + 2 * HOUR,
          hourStart + 2 * HOUR);
      List<BookedView> entries = engine.inspect("default", "r3").join().booked();
      assertThat(entries).extracting(BookedView::time).containsExactly(hourStart + HOUR, hourStart + 2 * HOUR);
      assertThat(entries).extracting(BookedView::cost).containsExactly(2L, 2L);
      assertThat(entries.get(0).rules()).containsExactly("two-per-hour");
      clock.set(hourStart + HOUR);
      assertThat(engine.inspect("default", "r3").join().booked()).extracting(BookedView::time)
          .as("the first booked window is the current one: its bookings count in used").containsExactly(hourStart + 2 * HOUR);
    }
  }

  @Test
  void aReleasedBookingIsNoLongerListed() {
    ManualClock clock = new ManualClock(T0);
    try (Engine engine = engine(clock)) {
      assertThat(engine.decide(Message.builder("r2").build()).join().allowed()).isTrue();
      Decision booked = engine.decide(Message.builder("r2").defer(Defer.BY_DEFAULT).build()).join();
      assertThat(engine.inspect("default", "r2").join().booked()).extracting(BookedView::time)
          .containsExactly(booked.sendAt());
      assertThat(engine.release(booked.decisionId()).join()).isTrue();
      assertThat(engine.inspect("default", "r2").join().booked()).isEmpty();
    }
  }
}
