package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Algorithm;
import dev.fcap.model.Decision;
import dev.fcap.model.Defer;
import dev.fcap.model.Dimension;
import dev.fcap.model.InvalidMessageException;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.SendWindow;
import dev.fcap.store.ForwardingStore;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.Durability;
import dev.fcap.store.memory.MemoryStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deferred decisions, case by case: what is booked where, what a release gives back, a retry of the
 * same message id, a past {@code notAfter}, send windows alone, durability, and the deferrals the
 * engine refuses. The random cases are {@code DeferralOracleProperties}'.
 */
class DeferralTest {
  private static final long T0 = ManualClock.START;
  private static final Rule TWO_PER_MINUTE = Rule.of("two-per-minute", 2, Duration.ofMinutes(1), Dimension.RECIPIENT);

  private final ManualClock clock = new ManualClock(T0);

  private Engine engine(Policy policy) {
    return Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock).callerTime(true)
        .policy(policy).build();
  }

  private static Policy policy(Rule... rules) {
    return new Policy("default", 1, List.of(rules));
  }

  private static Message deferred(String recipient) {
    return Message.builder(recipient).defer(Defer.BY_DEFAULT).build();
  }

  @Test
  void aMessageAtItsLimitIsBookedWhenItsOldestLeavesTheWindowAndTheNextAfterIt() {
    Engine engine = engine(policy(TWO_PER_MINUTE));
    assertThat(engine.decideAt(deferred("a"), T0).join().allowed()).isTrue();
    assertThat(engine.decideAt(deferred("a"), T0 + 10_000).join().allowed()).isTrue();
    Decision first = engine.decideAt(deferred("a"), T0 + 20_000).join();
    Decision second = engine.decideAt(deferred("a"), T0 + 20_000).join();
    assertThat(first.allowed()).isFalse();
    assertThat(first.deferred()).isTrue();
    assertThat(first.sendAt()).isEqualTo(T0 + 60_000);
    assertThat(first.retryAfterMs()).isEqualTo(40_000);
    assertThat(first.blockedBy()).containsExactly("two-per-minute");
    assertThat(second.sendAt()).isEqualTo(T0 + 70_000);
    // a plain message now sees the bookings: the windows ending in the next minute hold them
    Decision plain = engine.decideAt(Message.builder("a").build(), T0 + 65_000).join();
    assertThat(plain.allowed()).isFalse();
    assertThat(plain.deferred()).isFalse();
    assertThat(plain.sendAt()).isEqualTo(T0 + 120_000);
  }

  @Test
  void releasingABookingGivesItsSlotToTheNextDeferral() {
    Engine engine = engine(policy(TWO_PER_MINUTE));
    engine.decideAt(deferred("a"), T0).join();
    engine.decideAt(deferred("a"), T0 + 10_000).join();
    Decision booked = engine.decideAt(deferred("a"), T0 + 20_000).join();
    assertThat(engine.decideAt(deferred("a"), T0 + 21_000).join().sendAt()).isEqualTo(T0 + 70_000);
    assertThat(engine.release(booked.decisionId()).join()).isTrue();
    Decision next = engine.decideAt(deferred("a"), T0 + 22_000).join();
    assertThat(next.sendAt()).isEqualTo(T0 + 60_000);
    // the release ran at the latest time asked, not at the booked instant: the partition did not jump ahead
    assertThat(next.time()).isEqualTo(T0 + 22_000);
  }

  @Test
  void aRetryOfTheSameMessageIdAnswersTheSameBookingAndItsReleaseByMessageIdGivesItBack() {
    Engine engine = engine(policy(TWO_PER_MINUTE));
    engine.decideAt(deferred("a"), T0).join();
    engine.decideAt(deferred("a"), T0 + 10_000).join();
    Message m = Message.builder("a").messageId("order-7").defer(Defer.BY_DEFAULT).build();
    Decision booked = engine.decideAt(m, T0 + 20_000).join();
    Decision again = engine.decideAt(m, T0 + 30_000).join();
    assertThat(again.replayed()).isTrue();
    assertThat(again.deferred()).isTrue();
    assertThat(again.sendAt()).isEqualTo(booked.sendAt()).isEqualTo(T0 + 60_000);
    assertThat(again.decisionId()).isEqualTo(booked.decisionId());
    assertThat(engine.releaseMessage(m).join()).isTrue();
    assertThat(engine.decideAt(deferred("a"), T0 + 31_000).join().sendAt()).isEqualTo(T0 + 60_000);
  }

  @Test
  void aDeferralWhoseNotAfterHasPassedIsAdmittedNowLikeAnyMessageAndRefusedWhenFull() {
    Engine engine = engine(policy(TWO_PER_MINUTE));
    Message late = Message.builder("a").defer(new Defer(T0 - 1)).build();
    assertThat(engine.decideAt(late, T0).join().allowed()).isTrue();
    assertThat(engine.decideAt(late, T0 + 1).join().allowed()).isTrue();
    Decision refused = engine.decideAt(late, T0 + 2).join();
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.deferred()).isFalse();
    assertThat(refused.sendAt()).isEqualTo(T0 + 60_000);
    // both admissions were counted: the booking that follows is after both leave the window
    assertThat(engine.decideAt(deferred("a"), T0 + 3).join().sendAt()).isEqualTo(T0 + 60_000);
    assertThat(engine.decideAt(deferred("a"), T0 + 4).join().sendAt()).isEqualTo(T0 + 60_001);
  }

  @Test
  void aBookingIsNeverLaterThanNotAfter() {
    Engine engine = engine(policy(TWO_PER_MINUTE));
    engine.decideAt(deferred("a"), T0).join();
    engine.decideAt(deferred("a"), T0 + 10_000).join();
    Decision tooSoon = engine.decideAt(Message.builder("a").defer(new Defer(T0 + 59_999)).build(), T0 + 20_000).join();
    assertThat(tooSoon.deferred()).isFalse();
    assertThat(tooSoon.sendAt()).isEqualTo(T0 + 60_000);
    Decision justInTime = engine.decideAt(Message.builder("a").defer(new Defer(T0 + 60_000)).build(), T0 + 20_000)
        .join();
    assertThat(justInTime.deferred()).isTrue();
    assertThat(justInTime.sendAt()).isEqualTo(T0 + 60_000);
  }

  @Test
  void aShutSendWindowAloneBooksItsNextOpening() {
    SendWindow daytime = new SendWindow(ZoneOffset.UTC, List.of(new SendWindow.Interval(EnumSet.allOf(DayOfWeek.class),
        LocalTime.of(8, 0), LocalTime.of(20, 0))), Set.of());
    Engine engine = engine(policy(Rule.ofSendWindow("daytime", null, daytime, null, null, Mode.ENFORCE), TWO_PER_MINUTE));
    long night = T0 + Duration.ofHours(22).toMillis(); // 2026-01-01T22:00Z
    Decision d = engine.decideAt(Message.builder("a").defer(new Defer(night + Duration.ofDays(1).toMillis())).build(),
        night).join();
    assertThat(d.deferred()).isTrue();
    assertThat(d.sendAt()).isEqualTo(T0 + Duration.ofHours(32).toMillis()); // 08:00 the next day
    assertThat(d.blockedBy()).containsExactly("daytime");
  }

  @Test
  void bookingsSurviveARestartOfTheDurableStore(@TempDir Path dir) throws Exception {
    Policy policy = policy(TWO_PER_MINUTE);
    try (Engine engine = Engine.builder(MemoryStore.builder().clock(clock).durable(Durability.everyWrite(dir)).build())
        .clock(clock).callerTime(true).policy(policy).build()) {
      engine.decideAt(deferred("a"), T0).join();
      engine.decideAt(deferred("a"), T0 + 10_000).join();
      assertThat(engine.decideAt(deferred("a"), T0 + 20_000).join().sendAt()).isEqualTo(T0 + 60_000);
    }
    assertThat(Files.list(dir).count()).isPositive();
    try (Engine engine = Engine.builder(MemoryStore.builder().clock(clock).durable(Durability.everyWrite(dir)).build())
        .clock(clock).callerTime(true).policy(policy).build()) {
      assertThat(engine.decideAt(deferred("a"), T0 + 30_000).join().sendAt()).isEqualTo(T0 + 70_000);
    }
  }

  @Test
  void aFixedWindowBooksTheFirstLaterWindowWithRoom() {
    Rule twoAnHour = new Rule("two-an-hour", null, 2, Duration.ofHours(1), List.of(Dimension.RECIPIENT), null, null,
        Algorithm.FIXED_WINDOW, 0, Mode.ENFORCE, null);
    Engine engine = engine(policy(twoAnHour));
    long hour = Duration.ofHours(1).toMillis();
    engine.decideAt(deferred("a"), T0 + 10_000).join();
    engine.decideAt(deferred("a"), T0 + 20_000).join();
    Decision first = engine.decideAt(deferred("a"), T0 + 30_000).join();
    Decision second = engine.decideAt(deferred("a"), T0 + 30_000).join();
    Decision third = engine.decideAt(deferred("a"), T0 + 30_000).join();
    assertThat(List.of(first.sendAt(), second.sendAt(), third.sendAt())).containsExactly(T0 + hour, T0 + hour,
        T0 + 2 * hour);
    // the next hour is full: a plain message in it is refused until the hour after
    Decision plain = engine.decideAt(Message.builder("a").build(), T0 + hour + 5).join();
    assertThat(plain.allowed()).isFalse();
    assertThat(plain.sendAt()).as("the hour after holds one booking: room for one").isEqualTo(T0 + 2 * hour);
  }

  private static final Rule THREE_PER_CHANNEL_MINUTE = Rule.of("three-per-channel", 3, Duration.ofMinutes(1),
      Dimension.CHANNEL);

  private static Message sms(String recipient) {
    return Message.builder(recipient).channel("sms").build();
  }

  private static Message deferredSms(String recipient) {
    return Message.builder(recipient).channel("sms").defer(Defer.BY_DEFAULT).build();
  }

  /**
   * A rule keyed by the channel lives in a partition of its own: a deferral finds the instant both
   * partitions admit (the channel frees at +60 s, when its first message leaves, though the recipient
   * admits now) and books it in both; a plain message then sees the booking in the channel, and a
   * release gives the slot back in both.
   */
  @Test
  void aDeferralUnderARuleKeyedWithoutTheRecipientBooksOneInstantInEveryPartition() {
    Engine engine = engine(policy(TWO_PER_MINUTE, THREE_PER_CHANNEL_MINUTE));
    engine.decideAt(sms("a"), T0).join();
    engine.decideAt(sms("b"), T0 + 10_000).join();
    engine.decideAt(sms("c"), T0 + 20_000).join();
    Decision booked = engine.decideAt(deferredSms("d"), T0 + 30_000).join();
    assertThat(booked.deferred()).isTrue();
    assertThat(booked.sendAt()).isEqualTo(T0 + 60_000);
    assertThat(booked.blockedBy()).containsExactly("three-per-channel");
    // the channel holds the booking: at +60 s its window holds +10 s, +20 s and the booking
    Decision plain = engine.decideAt(sms("e"), T0 + 60_000).join();
    assertThat(plain.allowed()).isFalse();
    assertThat(plain.sendAt()).isEqualTo(T0 + 70_000);
    // and so does the recipient's partition: two more for d fill its minute with the booking
    assertThat(engine.decideAt(Message.builder("d").build(), T0 + 60_000).join().allowed()).isTrue();
    assertThat(engine.decideAt(Message.builder("d").build(), T0 + 60_000).join().allowed()).isFalse();
    assertThat(engine.release(booked.decisionId()).join()).isTrue();
    assertThat(engine.decideAt(sms("e"), T0 + 60_000).join().allowed()).as("the channel's slot, released").isTrue();
  }

  /**
   * The partitions move the instant in turn: the recipient's minute frees at +60 s, the channel's not
   * before +70 s, so the recipient is asked again from there; a deferral that finds no common instant
   * by its notAfter books nothing anywhere.
   */
  @Test
  void eachPartitionAsksTheOthersAgainFromItsInstantAndARefusalKeepsNothing() {
    Engine engine = engine(policy(TWO_PER_MINUTE, THREE_PER_CHANNEL_MINUTE));
    engine.decideAt(push("a"), T0).join();
    engine.decideAt(push("a"), T0 + 5_000).join();
    engine.decideAt(sms("b"), T0 + 10_000).join();
    engine.decideAt(sms("b"), T0 + 10_000).join();
    engine.decideAt(sms("c"), T0 + 20_000).join();
    // a's minute frees at +60 s; sms holds +10 s twice and +20 s, and has room for one from +70 s
    Message late = Message.builder("a").channel("sms").defer(new Defer(T0 + 65_000)).build();
    Decision refused = engine.decideAt(late, T0 + 30_000).join();
    assertThat(refused.deferred()).isFalse();
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.blockedBy()).containsExactly("two-per-minute", "three-per-channel");
    Decision booked = engine.decideAt(deferredSms("a"), T0 + 30_000).join();
    assertThat(booked.deferred()).isTrue();
    assertThat(booked.sendAt()).isEqualTo(T0 + 70_000);
    // the refusal left nothing at +60 s: a's minute from +70 s holds the booking alone
    assertThat(engine.decideAt(push("a"), T0 + 70_000).join().allowed()).isTrue();
    assertThat(engine.decideAt(push("a"), T0 + 70_000).join().allowed()).isFalse();
  }

  private static Message push(String recipient) {
    return Message.builder(recipient).channel("push").build();
  }

  /**
   * Two recipients may use the same message id: in the channel's partition, which both share, each
   * decision's record is its own, so a release gives back its own message, whichever is released:
   * a's at +0 s leaves the channel holding b's (+1 s) and c's at +60.5 s; b's leaves it holding c's alone.
   */
  @Test
  void aReleaseInASharedPartitionGivesBackItsOwnMessageWhenAnotherRecipientUsedTheSameMessageId() {
    Rule twoPerChannel = Rule.of("two-per-channel", 2, Duration.ofMinutes(1), Dimension.CHANNEL);
    for (int released = 0; released < 2; released++) {
      Engine engine = engine(policy(TWO_PER_MINUTE, twoPerChannel));
      Decision first = engine.decideAt(Message.builder("a").channel("sms").messageId("welcome").build(), T0).join();
      Decision second = engine.decideAt(Message.builder("b").channel("sms").messageId("welcome").build(), T0 + 1_000)
          .join();
      assertThat(second.allowed()).isTrue();
      assertThat(second.replayed()).isFalse();
      assertThat(engine.release((released == 0 ? first : second).decisionId()).join()).isTrue();
      assertThat(engine.decideAt(sms("c"), T0 + 2_000).join().allowed()).isTrue();
      Decision late = engine.decideAt(sms("d"), T0 + 60_500).join();
      if (released == 0) {
        assertThat(late.allowed()).as("the channel holds b's and c's").isFalse();
        assertThat(late.sendAt()).isEqualTo(T0 + 61_000);
      } else {
        assertThat(late.allowed()).as("the channel holds c's alone").isTrue();
      }
    }
  }

  /** Without a rule keyed by the recipient, a message id is still one recipient's: b's is not a retry of a's. */
  @Test
  void aMessageIdOfAnotherRecipientIsNoRetryWhereNoRuleIsKeyedByTheRecipient() {
    Engine engine = engine(policy(THREE_PER_CHANNEL_MINUTE));
    assertThat(engine.decideAt(Message.builder("a").channel("sms").messageId("m").build(), T0).join().allowed()).isTrue();
    Decision other = engine.decideAt(Message.builder("b").channel("sms").messageId("m").build(), T0 + 1).join();
    assertThat(other.replayed()).isFalse();
    assertThat(other.rules().get(0).used()).isEqualTo(1);
    assertThat(engine.decideAt(Message.builder("a").channel("sms").messageId("m").build(), T0 + 2).join().replayed())
        .as("a's own retry").isTrue();
  }

  /** 2026-03-06T12:00 in New York (EST): the night of the 7th to the 8th springs forward, so the 8th lasts 23 hours. */
  private static final long NY_FRIDAY_NOON = java.time.Instant.parse("2026-03-06T17:00:00Z").toEpochMilli();
  private static final Rule ONE_A_NEW_YORK_DAY = new Rule("one-a-day", null, 1, Duration.ofDays(1),
      List.of(Dimension.RECIPIENT), null, null, Algorithm.FIXED_WINDOW, 0, Mode.ENFORCE, ZoneId.of("America/New_York"));

  private static long utc(String instant) {
    return java.time.Instant.parse(instant).toEpochMilli();
  }

  private static Message deferredFor(String recipient, long notAfter) {
    return Message.builder(recipient).defer(new Defer(notAfter)).build();
  }

  /**
   * A cap of a local day books each next local midnight, in the period that holds it: after the
   * 23-hour 8th, midnight of the 9th is 04:00 UTC, not the 05:00 that days of 24 hours would give;
   * a plain message on the 9th sees that day's booking and is sent to the first day with room.
   */
  @Test
  void aLocalDayCapBooksEachNextLocalMidnightAcrossADaylightSavingChange() {
    clock.set(NY_FRIDAY_NOON);
    Engine engine = engine(policy(ONE_A_NEW_YORK_DAY));
    long notAfter = NY_FRIDAY_NOON + Duration.ofDays(6).toMillis();
    assertThat(engine.decideAt(deferredFor("a", notAfter), NY_FRIDAY_NOON).join().allowed()).isTrue();
    List<Long> booked = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Decision d = engine.decideAt(deferredFor("a", notAfter), NY_FRIDAY_NOON + i).join();
      assertThat(d.deferred()).isTrue();
      booked.add(d.sendAt());
    }
    assertThat(booked).containsExactly(utc("2026-03-07T05:00:00Z"), utc("2026-03-08T05:00:00Z"),
        utc("2026-03-09T04:00:00Z"), utc("2026-03-10T04:00:00Z"));
    clock.set(utc("2026-03-09T04:30:00Z"));
    Decision plain = engine.decideAt(Message.builder("a").build(), utc("2026-03-09T04:30:00Z")).join();
    assertThat(plain.allowed()).isFalse();
    assertThat(plain.sendAt()).as("the 9th and 10th hold their bookings").isEqualTo(utc("2026-03-11T04:00:00Z"));
    // the 9th's booking still counts at the end of its day, whatever the counter's expiry
    clock.set(utc("2026-03-10T03:59:59Z"));
    assertThat(engine.decideAt(Message.builder("a").build(), utc("2026-03-10T03:59:59Z")).join().allowed()).isFalse();
    clock.set(utc("2026-03-11T04:00:00Z"));
    assertThat(engine.decideAt(Message.builder("a").build(), utc("2026-03-11T04:00:00Z")).join().allowed()).isTrue();
  }

  /**
   * A window of two days in a zone counts runs of two local days (from an even epoch day): London's
   * run of 28-29 March 2026 spans the change to summer time and ends at midnight BST, 23:00 UTC on
   * the 29th, where a booking lands, not at the 00:00 UTC that 48 hours from the run's start give.
   */
  @Test
  void aWindowOfDaysInAZoneBooksTheNextRunOfLocalDays() {
    Rule londonTwoDays = new Rule("london-two-days", null, 2, Duration.ofDays(2), List.of(Dimension.RECIPIENT), null,
        null, Algorithm.FIXED_WINDOW, 0, Mode.ENFORCE, ZoneId.of("Europe/London"));
    long saturday = utc("2026-03-28T12:00:00Z");
    clock.set(saturday);
    Engine engine = engine(policy(londonTwoDays));
    long notAfter = saturday + Duration.ofDays(6).toMillis();
    assertThat(engine.decideAt(deferredFor("a", notAfter), saturday).join().allowed()).isTrue();
    assertThat(engine.decideAt(deferredFor("a", notAfter), saturday).join().allowed()).isTrue();
    List<Long> booked = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Decision d = engine.decideAt(deferredFor("a", notAfter), saturday + i).join();
      assertThat(d.deferred()).isTrue();
      booked.add(d.sendAt());
    }
    assertThat(booked).containsExactly(utc("2026-03-29T23:00:00Z"), utc("2026-03-29T23:00:00Z"),
        utc("2026-03-31T23:00:00Z"));
    // the run that ends at 23:00 UTC counts its two messages until then, and the next its two bookings
    long lastHour = utc("2026-03-29T22:59:59Z");
    clock.set(lastHour);
    Decision plain = engine.decideAt(Message.builder("a").build(), lastHour).join();
    assertThat(plain.allowed()).isFalse();
    assertThat(plain.sendAt()).isEqualTo(utc("2026-03-31T23:00:00Z"));
  }

  /**
   * A message admitted beside bookings days ahead is journaled as a step whose counter carries the
   * periods (a delta): replayed at recovery, the counter still holds the booking of the 9th, which
   * lies after the 23-hour day, until that day ends.
   */
  @Test
  void localDayBookingsAndTheStepsBesideThemSurviveARestartOfTheDurableStore(@TempDir Path dir) throws Exception {
    Policy policy = policy(ONE_A_NEW_YORK_DAY);
    long notAfter = NY_FRIDAY_NOON + Duration.ofDays(6).toMillis();
    String firstBooking;
    clock.set(NY_FRIDAY_NOON);
    try (Engine engine = Engine.builder(MemoryStore.builder().clock(clock).durable(Durability.everyWrite(dir)).build())
        .clock(clock).callerTime(true).policy(policy).build()) {
      engine.decideAt(deferredFor("a", notAfter), NY_FRIDAY_NOON).join();
      firstBooking = engine.decideAt(deferredFor("a", notAfter), NY_FRIDAY_NOON).join().decisionId();
      assertThat(engine.decideAt(deferredFor("a", notAfter), NY_FRIDAY_NOON).join().sendAt())
          .isEqualTo(utc("2026-03-08T05:00:00Z"));
      assertThat(engine.decideAt(deferredFor("a", notAfter), NY_FRIDAY_NOON).join().sendAt())
          .isEqualTo(utc("2026-03-09T04:00:00Z"));
      assertThat(engine.release(firstBooking).join()).isTrue();
      clock.set(utc("2026-03-07T06:00:00Z"));
      assertThat(engine.decideAt(Message.builder("a").build(), utc("2026-03-07T06:00:00Z")).join().allowed())
          .as("the 7th's slot, released").isTrue();
    }
    clock.set(utc("2026-03-09T06:00:00Z")); // the store loads its journal at this time: what expired is dropped
    try (Engine engine = Engine.builder(MemoryStore.builder().clock(clock).durable(Durability.everyWrite(dir)).build())
        .clock(clock).callerTime(true).policy(policy).build()) {
      Decision late = engine.decideAt(Message.builder("a").build(), utc("2026-03-09T06:00:00Z")).join();
      assertThat(late.allowed()).as("the 9th holds its booking").isFalse();
      assertThat(late.sendAt()).isEqualTo(utc("2026-03-10T04:00:00Z"));
    }
  }

  /**
   * A counter holds at most 256 bookings (PartitionStep.MAX_BOOKINGS): the next deferral books
   * nothing though a slot lies before its notAfter, in a log and in a fixed window alike; a release
   * makes room for one again.
   */
  @Test
  void aCounterFullOfBookingsBooksNoMore() throws Exception {
    Rule perSecondWindow = new Rule("one-per-second-window", null, 1, Duration.ofSeconds(1), List.of(Dimension.RECIPIENT),
        null, null, Algorithm.FIXED_WINDOW, 0, Mode.ENFORCE, null);
    for (Rule rule : List.of(Rule.of("one-per-second", 1, Duration.ofSeconds(1), Dimension.RECIPIENT), perSecondWindow)) {
      Engine engine = engine(policy(rule));
      Message m = Message.builder("a").defer(Defer.until(java.time.Instant.ofEpochMilli(T0 + 3_600_000))).build();
      assertThat(engine.decide(m).join().allowed()).isTrue();
      Decision last = null;
      for (int i = 1; i <= 256; i++) {
        last = engine.decide(m).join();
        assertThat(last.deferred()).as("%s: booking %d", rule.id(), i).isTrue();
        assertThat(last.sendAt()).isEqualTo(T0 + i * 1000L);
      }
      Decision full = engine.decide(m).join();
      assertThat(full.deferred()).as("%s: the 257th booking", rule.id()).isFalse();
      assertThat(full.allowed()).isFalse();
      assertThat(full.blockedBy()).containsExactly(rule.id());
      assertThat(engine.release(last.decisionId()).join()).isTrue();
      assertThat(engine.decide(m).join().sendAt()).as("%s: the released slot again", rule.id()).isEqualTo(last.sendAt());
    }
  }

  @Test
  void aDeferralTheEngineCannotHonourIsRefusedNamingWhy() {
    Rule gcra = new Rule("smooth", null, 10, Duration.ofMinutes(1), List.of(Dimension.RECIPIENT), null, null,
        Algorithm.GCRA, 0, Mode.ENFORCE, null);
    Rule large = Rule.of("large", 5000, Duration.ofHours(1), Dimension.RECIPIENT);
    assertRefused(engine(policy(TWO_PER_MINUTE, gcra)), deferred("a"), "defer", "rule 'smooth' uses gcra");
    assertRefused(engine(policy(large)), deferred("a"), "defer", "rule 'large' keeps more than 256 messages");
    assertRefused(engine(policy(TWO_PER_MINUTE)), Message.builder("a").defer(new Defer(T0 + Duration.ofDays(8).toMillis()))
        .build(), "notAfter", "more than 7 days");
    Engine notBooking = Engine.builder(new ForwardingStore(MemoryStore.builder().clock(clock).build()) {
      @Override
      public boolean books() {
        return false;
      }
    }).clock(clock).callerTime(true).policy(policy(TWO_PER_MINUTE)).build();
    assertRefused(notBooking, deferred("a"), "defer", "cannot book");
    // a dry run books nothing, so it is not refused
    assertThat(notBooking.checkAt(deferred("a"), T0).join().allowed()).isTrue();
  }

  /**
   * Eight threads defer and decide to twenty recipients at once while the clock moves: sent at their
   * instants (admitted: the decision's time; booked: sendAt), no recipient ever gets more than a rule
   * allows in any window, and every release by id gives its slot back to a later deferral.
   */
  @Test
  void manyThreadsDeferringToTheSameRecipientsNeverBreakAWindow() throws Exception {
    Rule perMinute = Rule.of("three-per-minute", 3, Duration.ofMinutes(1), Dimension.RECIPIENT);
    Rule perHour = Rule.of("five-per-hour", 5, Duration.ofHours(1), Dimension.RECIPIENT);
    Rule perTenMinutes = new Rule("four-per-ten-minutes", null, 4, Duration.ofMinutes(10), List.of(Dimension.RECIPIENT),
        null, null, Algorithm.FIXED_WINDOW, 0, Mode.ENFORCE, null);
    Engine engine = Engine.builder(MemoryStore.builder().clock(clock).segments(2).build()).clock(clock)
        .policy(policy(perMinute, perHour, perTenMinutes)).build();
    Map<String, List<long[]>> sent = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      int thread = t;
      done.add(pool.submit(() -> {
        SplittableRandom random = new SplittableRandom(thread);
        for (int i = 0; i < 400; i++) {
          String recipient = "r" + random.nextInt(20);
          clock.advance(random.nextInt(3) == 0 ? 1_000 : 0);
          Message m = random.nextInt(4) == 0 ? Message.builder(recipient).build() : deferred(recipient);
          Decision d = engine.decide(m).join();
          if (!d.allowed() && !d.deferred()) {
            continue;
          }
          long at = d.deferred() ? d.sendAt() : d.time();
          if (random.nextInt(10) == 0 && engine.release(d.decisionId()).join()) {
            continue; // given back: never sent
          }
          sent.computeIfAbsent(recipient, k -> Collections.synchronizedList(new ArrayList<>()))
              .add(new long[] {at});
        }
        return null;
      }));
    }
    for (Future<?> f : done) {
      f.get(2, TimeUnit.MINUTES);
    }
    pool.shutdown();
    assertThat(sent.values().stream().mapToInt(List::size).sum()).isGreaterThan(20 * 5);
    for (Map.Entry<String, List<long[]>> e : sent.entrySet()) {
      long[] times = e.getValue().stream().mapToLong(x -> x[0]).sorted().toArray();
      for (int i = 0; i < times.length; i++) {
        int inMinute = 0;
        int inHour = 0;
        int inTen = 0;
        long tenStart = Math.floorDiv(times[i], 600_000L) * 600_000L;
        for (long t : times) {
          inMinute += t > times[i] - 60_000 && t <= times[i] ? 1 : 0;
          inHour += t > times[i] - 3_600_000 && t <= times[i] ? 1 : 0;
          inTen += t >= tenStart && t < tenStart + 600_000 ? 1 : 0;
        }
        assertThat(inMinute).as("%s: the minute ending %d", e.getKey(), times[i]).isLessThanOrEqualTo(3);
        assertThat(inHour).as("%s: the hour ending %d", e.getKey(), times[i]).isLessThanOrEqualTo(5);
        assertThat(inTen).as("%s: the ten minutes from %d", e.getKey(), tenStart).isLessThanOrEqualTo(4);
      }
    }
  }

  private void assertRefused(Engine engine, Message m, String field, String why) {
    assertThatThrownBy(() -> engine.requireDeferrable(m)).isInstanceOf(InvalidMessageException.class)
        .hasMessageContaining(why).extracting(e -> ((InvalidMessageException) e).field()).isEqualTo(field);
    assertThatThrownBy(() -> engine.decideAt(m, T0).join()).isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(InvalidMessageException.class);
    assertThatThrownBy(() -> engine.decideNow(m)).isInstanceOf(InvalidMessageException.class) // not wrapped
        .extracting(e -> ((InvalidMessageException) e).field()).isEqualTo(field);
    // and nothing was recorded: the same message without a deferral is admitted as the first
    Decision plain = engine.decideAt(m.withDefer(null), T0).join();
    assertThat(plain.rules()).allSatisfy(o -> assertThat(o.used()).isZero());
  }
}
