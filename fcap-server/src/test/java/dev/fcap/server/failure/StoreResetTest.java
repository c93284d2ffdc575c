package dev.fcap.server.failure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.ManualClock;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * A shared store that loses its data under a running node, as a trace on a manual clock: probe every
 * 100 ms, window 1 s; rule 3 per minute per recipient, so the longest window is 60 s; category
 * {@code marketing} denies when the failure policy decides, the others decide on the node's own store.
 */
class StoreResetTest {
  private static final Policy POLICY = new Policy("default", 1,
      List.of(Rule.of("per-minute", 3, Duration.ofMinutes(1), Dimension.RECIPIENT)));
  private static final long LONGEST_WINDOW_MS = 60_000;
  private final ManualClock clock = new ManualClock();
  private final ManualScheduler scheduler = new ManualScheduler(clock);
  private final ForgetfulStore shared = new ForgetfulStore(clock);

  /** A store that keeps an identity, as Redis does, and can restart empty. */
  static final class ForgetfulStore implements Store {
    private final ManualClock clock;
    volatile MemoryStore data;
    volatile boolean reachable = true;
    private String identity = "id-0";
    private String seen;
    private int created;

    ForgetfulStore(ManualClock clock) {
      this.clock = clock;
      this.data = MemoryStore.builder().clock(clock).build();
    }

    /** The episode: the store comes back with nothing, not even its identity. */
    synchronized void restartEmpty() {
      data = MemoryStore.builder().clock(clock).build();
      identity = null;
    }

    @Override
    public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
      return reachable ? data.apply(request) : refused();
    }

    @Override
    public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
      return reachable ? data.read(partition) : refused();
    }

    @Override
    public CompletableFuture<Boolean> delete(byte[] partition) {
      return reachable ? data.delete(partition) : refused();
    }

    @Override
    public long now() {
      return clock.millis();
    }

    @Override
    public boolean keepsIdentity() {
      return true;
    }

    @Override
    public synchronized CompletableFuture<Optional<String>> checkIdentity() {
      if (!reachable) {
        return refused();
      }
      String before = seen;
      if (identity == null) {
        identity = "id-" + ++created;
      }
      seen = identity;
      return CompletableFuture.completedFuture(before == null || before.equals(identity) ? Optional.empty()
          : Optional.of("identity " + before + " missing, wrote " + identity));
    }

    private static <T> CompletableFuture<T> refused() {
      return CompletableFuture.failedFuture(new StoreException(StoreException.Reason.UNAVAILABLE,
          "connection refused (test)"));
    }
  }

  private FailoverStore failover(FailurePolicy.OnReset onReset) {
    FailurePolicy policy = new FailurePolicy(Duration.ofMillis(250), FailureAction.LOCAL,
        Map.of("marketing", FailureAction.DENY), Duration.ofMillis(100), Duration.ofSeconds(1), 2, 1000,
        FailureAction.LOCAL, onReset);
    return FailoverStore.newDecorator(policy, clock, scheduler, Runnable::run, () -> LONGEST_WINDOW_MS).apply(shared);
  }

  private static Engine engine(Store store, ManualClock clock) {
    return Engine.builder(store).clock(clock).policy(POLICY).build();
  }

  private static Message to(String recipient) {
    return Message.builder(recipient).build();
  }

  private long usedInShared(String recipient) {
    return engine(shared.data, clock).inspect("default", recipient).join().counters().stream()
        .mapToLong(c -> c.used()).sum();
  }

  /** Three admissions of {@code recipient}, then the store refuses it: its quota is used. */
  private static void useTheQuota(Engine engine, String recipient) {
    for (int i = 0; i < 3; i++) {
      assertThat(engine.decide(to(recipient)).join().allowed()).isTrue();
    }
    assertThat(engine.decide(to(recipient)).join().allowed()).isFalse();
  }

  @Test
  void decideAsUsualNoticesTheLossWithinOneProbeAndKeepsDecidingOnTheStore() {
    FailoverStore failover = failover(FailurePolicy.OnReset.DECIDE);
    Engine engine = engine(failover, clock);
    scheduler.tick(100); // the first check adopts the identity written on first connect
    useTheQuota(engine, "r");
    shared.restartEmpty();
    scheduler.tick(99);
    assertThat(failover.resets()).as("not before the next probe").isZero();
    scheduler.tick(1);
    assertThat(failover.resets()).as("noticed by the next probe").isEqualTo(1);
    assertThat(failover.lastReset().noticedAt()).isEqualTo(clock.millis());
    assertThat(failover.lastReset().why()).contains("id-0 missing");
    assertThat(failover.lastReset().policyUntil()).isZero();
    assertThat(failover.resetUntil()).isZero();
    assertThat(failover.policyDecides()).isFalse();
    Decision d = engine.decide(to("r")).join();
    assertThat(d.degraded()).as("decided by the store, which counts from zero").isFalse();
    assertThat(d.allowed()).isTrue();
    scheduler.tick(1000);
    assertThat(failover.resets()).as("a loss is reported once").isEqualTo(1);
  }

  @Test
  void failurePolicyDecidesUntilTheLongestWindowHasPassedThenWritesBack() {
    FailoverStore failover = failover(FailurePolicy.OnReset.POLICY);
    Engine engine = engine(failover, clock);
    scheduler.tick(100);
    useTheQuota(engine, "r");
    shared.restartEmpty();
    scheduler.tick(100);
    long noticed = clock.millis();
    assertThat(failover.resets()).isEqualTo(1);
    assertThat(failover.resetUntil()).isEqualTo(noticed + LONGEST_WINDOW_MS);
    assertThat(failover.lastReset().policyUntil()).isEqualTo(noticed + LONGEST_WINDOW_MS);
    assertThat(failover.policyDecides()).isTrue();
    assertThat(failover.down()).as("the store answers: no outage").isFalse();
    assertThat(failover.ready().join()).as("ready: every node shares the loss").isTrue();

    Decision local = engine.decide(to("r")).join();
    assertThat(local.degraded()).as("the failure policy (local) decides, not the emptied store").isTrue();
    CompletableFuture<Decision> denied = engine.decide(Message.builder("m").category("marketing").build());
    FailoverStore.Down down = (FailoverStore.Down) unwrap(denied);
    assertThat(down.resetUntil()).as("deny until the failure policy stops deciding")
        .isEqualTo(noticed + LONGEST_WINDOW_MS);

    scheduler.tick(LONGEST_WINDOW_MS - 1);
    assertThat(failover.policyDecides()).as("not before the longest window has passed").isTrue();
    assertThat(engine.decide(to("r")).join().degraded()).isTrue();
    scheduler.tick(200); // the window passed; the next probe writes the node's admissions back
    assertThat(failover.policyDecides()).isFalse();
    assertThat(failover.resetUntil()).isZero();
    assertThat(failover.writtenBack()).as("both of the node's admissions went to the store").isEqualTo(2);
    assertThat(usedInShared("r")).as("the store counts them at their times: the first has left its window")
        .isEqualTo(1);
    Decision after = engine.decide(to("r")).join();
    assertThat(after.degraded()).isFalse();
    assertThat(failover.resets()).isEqualTo(1);
  }

  @Test
  void theStoreAnsweringAfterFailingCallsIsCheckedAtOnce() {
    FailoverStore failover = failover(FailurePolicy.OnReset.DECIDE);
    Engine engine = engine(failover, clock);
    scheduler.tick(100);
    shared.reachable = false;
    assertThat(unwrap(engine.decide(to("r")))).isInstanceOf(StoreException.class); // a failure streak begins
    scheduler.tick(10);
    shared.restartEmpty();
    shared.reachable = true;
    assertThat(engine.decide(to("r")).join().degraded()).as("the streak ends: no outage").isFalse();
    scheduler.tick(0);
    assertThat(failover.resets()).as("checked at once, not at the next probe").isEqualTo(1);
    assertThat(failover.lastReset().noticedAt()).isEqualTo(ManualClock.START + 110);
  }

  @Test
  void aCheckTheStoreCannotAnswerIsNoLossAndALossSeenAfterwardsStillCounts() {
    FailoverStore failover = failover(FailurePolicy.OnReset.DECIDE);
    scheduler.tick(100);
    shared.reachable = false;
    scheduler.tick(1000);
    assertThat(failover.resets()).isZero();
    shared.restartEmpty();
    shared.reachable = true;
    scheduler.tick(100);
    assertThat(failover.resets()).isEqualTo(1);
  }

  @Test
  void aStoreThatKeepsNoIdentityIsNotChecked() {
    FailurePolicy policy = FailurePolicy.defaults();
    MemoryStore memory = MemoryStore.builder().clock(clock).build();
    memory.decorate(FailoverStore.newDecorator(policy, clock, scheduler, Runnable::run, () -> LONGEST_WINDOW_MS));
    assertThat(scheduler.pending()).isZero();
  }

  private static Throwable unwrap(CompletableFuture<?> f) {
    assertThat(f).isCompletedExceptionally();
    try {
      f.join();
      throw new AssertionError("not failed");
    } catch (CompletionException e) {
      return e.getCause();
    }
  }
}
