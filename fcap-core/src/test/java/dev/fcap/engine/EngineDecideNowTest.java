package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.ForwardingStore;
import dev.fcap.store.ManualClock;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.StoreException;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link Engine#decideNow} decides what {@link Engine#decide} does, on the calling thread and through
 * a store's futures, and fails with what the store failed with, not wrapped.
 */
class EngineDecideNowTest {
  private static final Policy POLICY = new Policy("default", 1, List.of(
      Rule.of("minute", 2, Duration.ofMinutes(1), Dimension.RECIPIENT),
      Rule.of("content", 1, Duration.ofHours(1), Dimension.RECIPIENT, Dimension.CONTENT)));

  @Test
  void theSameDecisionsAsDecideOnEitherPath() {
    for (boolean throughFutures : new boolean[] {false, true}) {
      ManualClock clock = new ManualClock();
      MemoryStore memory = MemoryStore.builder().clock(clock).build();
      Engine engine = Engine.builder(throughFutures ? new ForwardingStore(memory) {} : memory).clock(clock)
          .policy(POLICY).build();
      Message a = Message.builder("r1").content("a").build();
      Message b = Message.builder("r1").content("b").build();
      Decision first = engine.decideNow(a);
      Decision again = engine.decideNow(a); // the content rule refuses
      Decision other = engine.decide(b).join();
      Decision third = engine.decideNow(Message.builder("r1").content("c").build()); // the minute is full
      assertThat(first.allowed()).isTrue();
      assertThat(again.allowed()).isFalse();
      assertThat(again.blockedBy()).containsExactly("content");
      assertThat(other.allowed()).isTrue();
      assertThat(third.blockedBy()).containsExactly("minute");
      assertThat(third.rules()).extracting(o -> o.used()).containsExactly(2L, 0L);
      assertThat(third.sendAt()).isEqualTo(clock.millis() + 60_000);
      assertThat(engine.release(first.decisionId()).join()).isTrue(); // its id releases what it recorded
      assertThat(engine.decideNow(Message.builder("r1").content("d").build()).allowed()).isTrue();
    }
  }

  @Test
  void aStoreFailureIsThrownAsItIs() {
    ManualClock clock = new ManualClock();
    AtomicBoolean down = new AtomicBoolean(true);
    MemoryStore memory = MemoryStore.builder().clock(clock).build();
    Engine engine = Engine.builder(new ForwardingStore(memory) {
      @Override
      public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
        return down.get() ? CompletableFuture.failedFuture(new StoreException(StoreException.Reason.UNAVAILABLE,
            "down", null)) : super.apply(request);
      }
    }).clock(clock).releaseHorizon(Duration.ZERO).policy(POLICY).build();
    Message m = Message.builder("r2").content("a").build();
    assertThatThrownBy(() -> engine.decideNow(m)).isExactlyInstanceOf(StoreException.class).hasMessage("down");
    assertThatThrownBy(() -> engine.decide(m).join()).isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(StoreException.class);
    down.set(false); // nothing was recorded by the failed decisions
    assertThat(engine.decideNow(m).rules()).extracting(o -> o.used()).containsExactly(0L, 0L);
  }
}
