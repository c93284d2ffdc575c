package dev.fcap.server.failure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * The failover decorator as time traces on a manual clock and a scheduler the test ticks: deadline
 * 250 ms, outage window 1 s, probe every 100 ms, calls of 2 requests; rule: 3 per minute per recipient.
 */
class FailoverStoreTest {
  private static final Policy POLICY = new Policy("default", 1,
      List.of(Rule.of("per-minute", 3, Duration.ofMinutes(1), Dimension.RECIPIENT)));
  private final ManualClock clock = new ManualClock();
  private final ManualScheduler scheduler = new ManualScheduler(clock);
  private final MemoryStore shared = MemoryStore.builder().clock(clock).build();
  private final GateStore gate = new GateStore(shared);
  private final FailurePolicy policy = new FailurePolicy(Duration.ofMillis(250), FailureAction.LOCAL,
      Map.of("marketing", FailureAction.DENY), Duration.ofMillis(100), Duration.ofSeconds(1), 2, 1000);
  private final Store chain = gate.decorate(FailoverStore.newDecorator(policy, clock, scheduler));
  private final FailoverStore failover = chain.as(FailoverStore.class).orElseThrow();
  private final Engine engine = Engine.builder(chain).clock(clock).policy(POLICY).build();
  /** Reads the shared store directly: what every node would see. */
  private final Engine truth = Engine.builder(shared).clock(clock).policy(POLICY).build();

  private static Message to(String recipient) {
    return Message.builder(recipient).build();
  }

  private static Message to(String recipient, String category) {
    return Message.builder(recipient).category(category).build();
  }

  private long usedInShared(String recipient) {
    return truth.inspect("default", recipient).join().counters().stream().mapToLong(c -> c.used()).sum();
  }

  private static StoreException failure(CompletableFuture<?> f) {
    assertThat(f).isCompletedExceptionally();
    try {
      f.join();
      throw new AssertionError("not failed");
    } catch (CompletionException e) {
      return (StoreException) e.getCause();
    }
  }

  /** t0 store unreachable; calls fail for the window; the probe at t0 + 1 s declares the outage. */
  private void goDown() {
    gate.mode = GateStore.Mode.DOWN;
    assertThat(failure(engine.decide(to("first-failure"))).reason()).isEqualTo(StoreException.Reason.UNAVAILABLE);
    assertThat(failover.down()).isFalse();
    scheduler.tick(999);
    assertThat(failover.down()).as("not before the window is over").isFalse();
    scheduler.tick(1);
    assertThat(failover.down()).isTrue();
  }

  @Test
  void aSlowCallIsBackpressureNotAnOutageAndItsLateAdmissionIsReleased() {
    gate.mode = GateStore.Mode.HOLD;
    CompletableFuture<Decision> slow = engine.decide(to("r"));
    assertThat(slow).isNotDone();
    scheduler.tick(250);
    assertThat(failure(slow).reason()).isEqualTo(StoreException.Reason.TIMEOUT);
    assertThat(failover.down()).isFalse();

    // the store ran the call (it counted r) and answers late: the admission is taken back
    gate.mode = GateStore.Mode.UP;
    gate.release();
    assertThat(failover.lateReleases()).isEqualTo(1);
    assertThat(usedInShared("r")).isZero();

    // t0 + 300 ms: the store answers; the probe at t0 + 1 s passes; no outage, ever
    scheduler.tick(50);
    Decision next = engine.decide(to("r")).join();
    assertThat(next.allowed()).isTrue();
    assertThat(next.degraded()).isFalse();
    scheduler.tick(2000);
    assertThat(failover.down()).isFalse();
    assertThat(failover.outages()).isZero();
    assertThat(usedInShared("r")).isEqualTo(1);
  }

  @Test
  void outageLocalDecisionsThenWriteBackBeforeTheStoreDecidesAgain() {
    assertThat(engine.decide(to("a")).join().degraded()).isFalse(); // a: 1 in the store before the outage
    goDown();

    // local decisions, degraded: the outage store knows only what it admitted (3 more, then refused)
    for (int i = 0; i < 3; i++) {
      Decision d = engine.decide(to("a")).join();
      assertThat(d.degraded()).isTrue();
      assertThat(d.allowed()).isTrue();
    }
    Decision fourth = engine.decide(to("a")).join();
    assertThat(fourth.degraded()).isTrue();
    assertThat(fourth.allowed()).isFalse();

    scheduler.tick(100); // t0 + 1.1 s: the probe fails, still down
    assertThat(failover.down()).isTrue();
    gate.mode = GateStore.Mode.UP;
    assertThat(usedInShared("a")).isEqualTo(1);
    scheduler.tick(100); // t0 + 1.2 s: the probe passes; the journal is written back, then up
    assertThat(failover.down()).isFalse();
    assertThat(failover.writtenBack()).isEqualTo(3);
    assertThat(usedInShared("a")).as("store count plus what the outage store admitted").isEqualTo(4);

    Decision after = engine.decide(to("a")).join();
    assertThat(after.degraded()).isFalse();
    assertThat(after.allowed()).as("no fresh quota after the outage").isFalse();
    clock.advance(60_000);
    assertThat(engine.decide(to("a")).join().allowed()).isTrue();
  }

  @Test
  void hintsAndFloorsReachTheStoreWhileItIsUpAndNotDuringAnOutage() {
    byte[][] partitions = {{1}, {2}};
    chain.prefetch(partitions, 2);
    chain.advanceCallerTimeFloor(clock.millis());
    assertThat(gate.passedOn).containsExactly("prefetch 2", "floor " + clock.millis());

    goDown();
    gate.passedOn.clear();
    chain.prefetch(partitions, 2);
    chain.advanceCallerTimeFloor(clock.millis());
    assertThat(engine.decide(to("b")).join().degraded()).isTrue();
    assertThat(gate.passedOn).as("the outage store decides: the store hears of neither").isEmpty();

    gate.mode = GateStore.Mode.UP;
    scheduler.tick(100); // the probe passes: written back, up
    assertThat(failover.down()).isFalse();
    chain.advanceCallerTimeFloor(clock.millis() + 1);
    assertThat(gate.passedOn).containsExactly("floor " + (clock.millis() + 1));
  }

  @Test
  void categoriesNotDecidedLocallyFailFastDuringAnOutage() {
    goDown();
    assertThat(failure(engine.decide(to("m", "marketing")))).isInstanceOf(FailoverStore.Down.class);
    assertThat(failure(engine.decide(to("t", "transactional")))).isInstanceOf(FailoverStore.Down.class);
    assertThat(engine.decide(to("l", "newsletter")).join().degraded()).isTrue();
    assertThat(failure(chain.delete(new byte[] {1}))).isInstanceOf(FailoverStore.Down.class);
  }

  private static Message deferred(String recipient) {
    return Message.builder(recipient).defer(dev.fcap.model.Defer.BY_DEFAULT).build();
  }

  private List<Long> bookedInShared(String recipient) {
    return truth.inspect("default", recipient).join().booked().stream().map(b -> b.time()).toList();
  }

  @Test
  void aBookingOfTheOutageStoreIsWrittenBackAtItsInstant() {
    goDown();
    long first = clock.millis();
    for (int i = 0; i < 3; i++) {
      assertThat(engine.decide(to("b")).join().allowed()).isTrue();
      clock.advance(10);
    }
    Decision booked = engine.decide(deferred("b")).join();
    assertThat(booked.deferred()).isTrue();
    assertThat(booked.degraded()).isTrue();
    assertThat(booked.sendAt()).as("when the first local admission leaves the minute").isEqualTo(first + 60_000);

    gate.mode = GateStore.Mode.UP;
    scheduler.tick(1000); // the probe passes: the journal is written back, then up
    assertThat(failover.down()).isFalse();
    assertThat(failover.writtenBack()).isEqualTo(4);
    assertThat(bookedInShared("b")).as("booked in the store at its instant").containsExactly(first + 60_000);
    Decision next = engine.decide(deferred("b")).join();
    assertThat(next.degraded()).isFalse();
    assertThat(next.sendAt()).as("the store's next slot is after the written-back booking").isEqualTo(first + 60_010);
  }

  /** Also on a partition that has its incarnation already: the release claims in the partition's. */
  @Test
  void aLateBookingIsTakenBack() {
    for (int i = 0; i < 3; i++) {
      assertThat(engine.decide(to("c")).join().allowed()).isTrue();
    }
    gate.mode = GateStore.Mode.HOLD;
    CompletableFuture<Decision> slow = engine.decide(deferred("c"));
    scheduler.tick(250);
    assertThat(failure(slow).reason()).isEqualTo(StoreException.Reason.TIMEOUT);
    gate.mode = GateStore.Mode.UP;
    gate.release(); // the store booked it, for a caller that had its 429: it is released at once
    assertThat(failover.lateReleases()).isEqualTo(1);
    assertThat(bookedInShared("c")).isEmpty();
    assertThat(usedInShared("c")).isEqualTo(3);
  }

  @Test
  void aReleaseByMessageIdOfADecisionBeforeTheOutageFailsAndItsRetryAfterItReleases() {
    Message sent = Message.builder("m").messageId("before-outage").build();
    assertThat(engine.decide(sent).join().allowed()).isTrue();
    goDown();
    // its record is in the store: the outage store can neither claim it nor say it is not there
    assertThat(failure(engine.releaseMessage(sent)).reason()).isEqualTo(StoreException.Reason.UNAVAILABLE);
    gate.mode = GateStore.Mode.UP;
    scheduler.tick(100);
    assertThat(failover.down()).isFalse();
    assertThat(usedInShared("m")).as("nothing released during the outage").isEqualTo(1);
    assertThat(engine.releaseMessage(sent).join()).isTrue();
    assertThat(usedInShared("m")).isZero();
  }

  @Test
  void aReleaseDuringTheOutageFailsAndItsRetryAfterItReleases() {
    Decision before = engine.decide(to("b")).join();
    assertThat(usedInShared("b")).isEqualTo(1);
    goDown();
    // the release record is in the store: the outage store cannot claim it (503, retry later)
    assertThat(failure(engine.release(before.decisionId())).reason()).isEqualTo(StoreException.Reason.UNAVAILABLE);
    gate.mode = GateStore.Mode.UP;
    scheduler.tick(100);
    assertThat(failover.down()).isFalse();
    assertThat(usedInShared("b")).isEqualTo(1);
    assertThat(engine.release(before.decisionId()).join()).isTrue();
    assertThat(usedInShared("b")).isZero();
  }

  @Test
  void aDecisionOfTheOutageStoreIsReleasedByItsIdDuringAndAfterTheWriteBack() {
    Decision before = engine.decide(to("c")).join();
    assertThat(before.degraded()).isFalse(); // the store's partition has its incarnation
    goDown();
    Decision during = engine.decide(to("c")).join();
    Decision other = engine.decide(to("c")).join();
    assertThat(during.degraded()).isTrue();
    // Its incarnations are not the store's, so the outage store remembers these decisions (rather than
    // stamping them) and writes the records back. A release by decision id during the outage claims
    // the outage store's record: released, and the claim is written back after the decision.
    assertThat(engine.release(other.decisionId()).join()).as("released during the outage").isTrue();
    // one with a message id: its id names its record (the lookup, then the claim), the outage store's too
    Decision withId = engine.decide(Message.builder("c").messageId("m-during").build()).join();
    assertThat(withId.allowed() && withId.degraded()).isTrue();
    assertThat(engine.release(withId.decisionId()).join()).as("a record's release during the outage").isTrue();
    // a claim that finds nothing here (a decision of the store itself, or one claimed already: the outage
    // store cannot tell them apart) is the store's to answer: 503, retry
    assertThat(failure(engine.release(before.decisionId())).reason()).isEqualTo(StoreException.Reason.UNAVAILABLE);
    assertThat(failure(engine.release(other.decisionId())).reason()).isEqualTo(StoreException.Reason.UNAVAILABLE);
    gate.mode = GateStore.Mode.UP;
    scheduler.tick(100);
    assertThat(failover.down()).isFalse();
    assertThat(usedInShared("c")).as("1 before, 2 during, 1 released during").isEqualTo(2);
    assertThat(engine.release(other.decisionId()).join()).as("the retry, on the store").isTrue();
    assertThat(usedInShared("c")).isEqualTo(2);
    assertThat(engine.release(during.decisionId()).join()).as("after the write-back").isTrue();
    assertThat(usedInShared("c")).isEqualTo(1);
    assertThat(engine.release(during.decisionId()).join()).isTrue();
    assertThat(usedInShared("c")).as("once").isEqualTo(1);
  }

  @Test
  void aBatchGoesInCallsOfCallSizeAndStopsAfterACallMissesItsDeadline() {
    List<Message> five = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      five.add(to("batch" + i));
    }
    gate.callSizes.clear(); // the engine's start loaded the decision-id key: one call
    List<CompletableFuture<Decision>> ok = engine.decideAll(five, false);
    assertThat(Store.all(ok).join()).allMatch(d -> d.allowed() && !d.degraded());
    assertThat(gate.callSizes).containsExactly(2, 2, 1);

    gate.callSizes.clear();
    gate.mode = GateStore.Mode.HOLD;
    List<Message> more = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      more.add(to("late" + i));
    }
    List<CompletableFuture<Decision>> slow = engine.decideAll(more, false);
    scheduler.tick(250);
    for (CompletableFuture<Decision> f : slow) {
      assertThat(failure(f).reason()).isEqualTo(StoreException.Reason.TIMEOUT);
    }
    assertThat(gate.callSizes).as("the rest of the batch was not sent to a slow store").containsExactly(2);
    gate.mode = GateStore.Mode.UP;
    gate.release();
    assertThat(usedInShared("late0") + usedInShared("late1")).as("late admissions released").isZero();
    assertThat(failover.down()).isFalse();
  }

  @Test
  void aSilentStoreIsAnOutageAfterTwoWindowsAndASlowOneNever() {
    // slow: for 5 s every call misses its deadline, but each answer comes, 100 ms late
    gate.mode = GateStore.Mode.HOLD;
    for (int i = 0; i < 20; i++) {
      CompletableFuture<Decision> slow = engine.decide(to("slow" + i));
      scheduler.tick(250);
      assertThat(failure(slow).reason()).isEqualTo(StoreException.Reason.TIMEOUT);
      scheduler.tick(100);
      gate.release();
    }
    assertThat(failover.down()).as("an overloaded store is backpressure, not an outage").isFalse();
    assertThat(failover.outages()).isZero();
    assertThat(failover.lateReleases()).isEqualTo(20);
    gate.release();
    scheduler.tick(5000);

    // silent: nothing answers; the probe at t1 + 1 s waits another second, then the outage begins
    CompletableFuture<Decision> hung = engine.decide(to("hung"));
    scheduler.tick(250);
    failure(hung);
    scheduler.tick(1000);
    assertThat(failover.down()).isFalse();
    scheduler.tick(1000);
    assertThat(failover.down()).isTrue();
    assertThat(engine.decide(to("hung")).join().degraded()).isTrue();
  }

  /**
   * The write-back replays each local admission with its message id: a retry of that id after the
   * outage replays the first decision (admitted, not counted again), and a write-back that ran but
   * whose answer was lost (a WAIT no replica acknowledged) is written again by the next probe without
   * counting twice. Fails if {@link FailoverStore#recording} drops the id.
   */
  @Test
  void theWriteBackKeepsEachMessageIdSoARetryIsNotCountedAgain() {
    Message sent = Message.builder("k").messageId("outage-msg-1").build();
    Message other = Message.builder("k").messageId("outage-msg-2").build();
    goDown();
    Decision local = engine.decide(sent).join();
    assertThat(local.degraded()).isTrue();
    assertThat(local.allowed()).isTrue();
    assertThat(engine.decide(other).join().allowed()).isTrue();

    // the store is back but loses the answers of writes: each recording runs, the write-back fails
    gate.mode = GateStore.Mode.UNACKED;
    scheduler.tick(100);
    assertThat(failover.down()).as("a write-back that failed keeps the node degraded").isTrue();
    assertThat(usedInShared("k")).isEqualTo(2);
    gate.mode = GateStore.Mode.UP;
    scheduler.tick(100); // the next probe writes the same two steps again
    assertThat(failover.down()).isFalse();
    assertThat(usedInShared("k")).as("written twice, counted once: the message ids are kept").isEqualTo(2);

    // the caller never saw the degraded answer and retries the same message after the outage
    Decision retry = engine.decide(sent).join();
    assertThat(retry.degraded()).isFalse();
    assertThat(retry.allowed()).isTrue();
    assertThat(retry.replayed()).as("the store remembers the outage's decision").isTrue();
    assertThat(usedInShared("k")).isEqualTo(2);
    Decision third = engine.decide(Message.builder("k").messageId("outage-msg-3").build()).join();
    assertThat(third.allowed()).as("one left of 3 per minute").isTrue();
    assertThat(engine.decide(Message.builder("k").messageId("outage-msg-4").build()).join().allowed()).isFalse();
  }

  @Test
  void theProbeEndsAStreakWhenTheStoreAnswersAgain() {
    gate.mode = GateStore.Mode.DOWN;
    failure(engine.decide(to("x")));
    gate.mode = GateStore.Mode.UP;
    scheduler.tick(1000);
    assertThat(failover.down()).isFalse();
    // a new failure 5 s later starts a new window: one failure never declares an outage on its own
    clock.advance(5000);
    gate.mode = GateStore.Mode.DOWN;
    failure(engine.decide(to("x")));
    assertThat(failover.down()).isFalse();
  }
}
