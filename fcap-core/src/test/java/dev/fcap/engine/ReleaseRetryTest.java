package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.ReleaseResult;
import dev.fcap.model.Rule;
import dev.fcap.store.ForwardingStore;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * A release whose store call failed (store busy: HTTP 429; or a timeout after the store applied it)
 * and is retried gives back exactly once: the claim of the release record is in
 * the store step, so the engine never takes a failed call for a release.
 */
class ReleaseRetryTest {
  private static final Policy POLICY = new Policy("default", 1,
      List.of(Rule.of("per-minute", 3, Duration.ofMinutes(1), Dimension.RECIPIENT)));

  /** Fails the next RELEASE: before the store saw it ({@code applied} false) or after it applied it. */
  private static final class FailingRelease extends ForwardingStore {
    boolean failNext;
    boolean applied;

    FailingRelease(Store store) {
      super(store);
    }

    @Override
    public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
      if (request.operation() == Operation.RELEASE && failNext) {
        failNext = false;
        CompletableFuture<PartitionResult> call = applied ? super.apply(request) : CompletableFuture.completedFuture(null);
        return call.thenCompose(ignored -> CompletableFuture.failedFuture(applied
            ? new StoreException(StoreException.Reason.TIMEOUT, "answered too late")
            : new StoreException(StoreException.Reason.FULL, "busy")));
      }
      return super.apply(request);
    }
  }

  @Test
  void aReleaseTheStoreNeverAppliedIsGivenBackByItsRetry() {
    check(false);
  }

  @Test
  void aReleaseTheStoreAppliedBeforeItsAnswerTimedOutIsNotGivenBackAgainByItsRetry() {
    check(true);
  }

  private static void check(boolean applied) {
    ManualClock clock = new ManualClock();
    FailingRelease store = new FailingRelease(MemoryStore.builder().clock(clock).build());
    Engine engine = Engine.builder(store).clock(clock).policy(POLICY).build();
    Decision first = engine.decide(Message.builder("ada").build()).join();
    engine.decide(Message.builder("ada").build()).join();
    engine.decide(Message.builder("ada").build()).join();
    assertThat(engine.decide(Message.builder("ada").build()).join().allowed()).isFalse();

    store.failNext = true;
    store.applied = applied;
    assertThatThrownBy(() -> engine.releaseDecision(first.decisionId(), t -> true).join())
        .isInstanceOf(CompletionException.class).hasCauseInstanceOf(StoreException.class);
    assertThat(engine.releaseDecision(first.decisionId(), t -> true).join()).as("the retry")
        .isEqualTo(ReleaseResult.RELEASED);
    assertThat(engine.releaseDecision(first.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    assertThat(engine.decide(Message.builder("ada").build()).join().allowed()).as("one slot given back").isTrue();
    assertThat(engine.decide(Message.builder("ada").build()).join().allowed()).as("exactly one").isFalse();
  }
}
