package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

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
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The usual decision (one partition, no message id) seals its release in its id: its record in the
 * store is only the claim, and a release by its id is one store step. Decisions of several
 * partitions and decisions with a message id keep the release in the record (the store kit's release
 * tests cover both forms on every store).
 */
class SealedReleaseTest {
  private static final Policy POLICY = new Policy("default", 1, List.of(
      Rule.of("per-day", 50, Duration.ofDays(1), Dimension.RECIPIENT),
      Rule.of("same-content", 2, Duration.ofMinutes(59), Dimension.RECIPIENT, Dimension.CONTENT)));

  /** Records the operation of every store call. */
  private static final class Calls extends ForwardingStore {
    final List<Operation> operations = new ArrayList<>();

    Calls(Store store) {
      super(store);
    }

    @Override
    public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
      operations.add(request.operation());
      return super.apply(request);
    }
  }

  @Test
  void aReleaseByTheIdOfAnOrdinaryDecisionIsOneStoreStepAndGivesBackOnce() {
    ManualClock clock = new ManualClock();
    Calls store = new Calls(MemoryStore.builder().clock(clock).build());
    Engine engine = Engine.builder(store).clock(clock).policy(POLICY).build();
    Message m = Message.builder("ada").content("your code is 1234").build();
    Decision first = engine.decide(m).join();
    assertThat(engine.decide(m).join().allowed()).isTrue();
    assertThat(engine.decide(m).join().allowed()).as("two of the same content").isFalse();

    store.operations.clear();
    assertThat(engine.releaseDecision(first.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    assertThat(store.operations).as("no lookup before the claim").containsExactly(Operation.RELEASE);
    assertThat(engine.releaseDecision(first.decisionId(), t -> true).join()).as("again").isEqualTo(ReleaseResult.RELEASED);
    assertThat(engine.decide(m).join().allowed()).as("one given back").isTrue();
    assertThat(engine.decide(m).join().allowed()).as("exactly one").isFalse();

    clock.advance(Duration.ofDays(1).toMillis() + 1);
    Decision late = engine.decide(m).join();
    clock.advance(Duration.ofDays(1).toMillis() + 1_000); // the horizon, kept to the second as stored
    assertThat(engine.releaseDecision(late.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.EXPIRED);
  }

  @Test
  void anIdReadLongAfterItsDecisionNamesItsOwnReleaseAndNoOther() {
    ManualClock clock = new ManualClock();
    Engine engine = Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock).policy(POLICY).build();
    int recipients = 200;
    List<Decision> first = new ArrayList<>();
    for (int i = 0; i < recipients; i++) { // no id read yet: each decision reuses the thread's scratch
      first.add(engine.decide(Message.builder("r" + i).content("code").build()).join());
      clock.advance(1);
    }
    for (int i = 0; i < recipients; i++) {
      Message m = Message.builder("r" + i).content("code").build();
      assertThat(engine.decide(m).join().allowed()).isTrue();
      assertThat(engine.decide(m).join().allowed()).as("two of the same content").isFalse();
    }
    assertThat(first).allMatch(Decision::allowed);
    assertThat(first.stream().map(Decision::decisionId).distinct()).hasSize(recipients);
    for (int i = 0; i < recipients; i += 2) {
      assertThat(engine.releaseDecision(first.get(i).decisionId(), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    }
    for (int i = 0; i < recipients; i++) {
      Decision again = engine.decide(Message.builder("r" + i).content("code").build()).join();
      assertThat(again.allowed()).as("r%d: given back iff its own first decision was released", i).isEqualTo(i % 2 == 0);
    }
  }

  @Test
  void idsMadeOnOtherThreadsThanTheDecisionsAreTheOnesTheDecidingThreadWouldMake() throws Exception {
    ManualClock clock = new ManualClock();
    Engine engine = Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock).policy(POLICY).build();
    int recipients = 64;
    List<Decision> readElsewhere = new ArrayList<>();
    List<String> readHere = new ArrayList<>();
    for (int i = 0; i < recipients; i++) {
      readElsewhere.add(engine.decide(Message.builder("a" + i).content("code").build()).join());
      Decision twin = engine.decide(Message.builder("b" + i).content("code").build()).join();
      readHere.add(twin.decisionId());
    }
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
    try {
      List<java.util.concurrent.Future<String>> ids = new ArrayList<>();
      for (Decision d : readElsewhere) {
        ids.add(pool.submit(d::decisionId)); // each thread seals with its own ciphers
      }
      for (int i = 0; i < recipients; i++) {
        String id = ids.get(i).get();
        assertThat(id).isEqualTo(readElsewhere.get(i).decisionId()).isNotIn(readHere);
        assertThat(engine.releaseDecision(id, t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
      }
    } finally {
      pool.shutdownNow();
    }
    for (int i = 0; i < recipients; i++) { // each release gave back its own recipient's decision only
      Message a = Message.builder("a" + i).content("code").build();
      Message b = Message.builder("b" + i).content("code").build();
      assertThat(List.of(engine.decide(a).join().allowed(), engine.decide(a).join().allowed(),
          engine.decide(a).join().allowed())).as("a%d: released, two of the same content again", i)
          .containsExactly(true, true, false);
      assertThat(List.of(engine.decide(b).join().allowed(), engine.decide(b).join().allowed()))
          .as("b%d: not released, one more", i).containsExactly(true, false);
    }
  }

  @Test
  void anOrdinaryDecisionStoresNothingButItsPartitionsIncarnation() {
    int recipients = 1_000;
    // each decision to its own recipient: the partition's incarnation (15 bytes) and nothing per decision
    long perRecipient = storeBytes(true, recipients, 1) - storeBytes(false, recipients, 1);
    assertThat(perRecipient / (double) recipients).as("store bytes per recipient for releases").isLessThan(20);
    // ten decisions to each: still only the incarnation (a release record was 72 bytes, then 34 each)
    long perTen = storeBytes(true, recipients, 10) - storeBytes(false, recipients, 10);
    assertThat(perTen / (double) recipients).as("store bytes per recipient of ten decisions").isLessThan(20);
  }

  @Test
  void aReleaseWritesItsClaimAndAReleasedDecisionCostsItsClaimOnly() {
    ManualClock clock = new ManualClock();
    MemoryStore store = MemoryStore.builder().clock(clock).build();
    Engine engine = Engine.builder(store).clock(clock).policy(POLICY).build();
    engine.decide(Message.builder("warm-up").content("x").build()).join();
    List<Decision> decisions = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      decisions.add(engine.decide(Message.builder("r" + i).content("x").build()).join());
    }
    long before = store.bytes();
    for (Decision d : decisions) {
      assertThat(engine.releaseDecision(d.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    }
    // a claim: its key (16), time and tail (11), framing; the released counts leave the record
    assertThat((store.bytes() - before) / 100.0).as("bytes per released decision").isBetween(-80.0, 40.0);
    for (Decision d : decisions) {
      engine.releaseDecision(d.decisionId(), t -> true).join();
    }
    for (int i = 0; i < 100; i++) {
      assertThat(engine.decide(Message.builder("r" + i).content("x").build()).join().allowed()).isTrue();
      assertThat(engine.decide(Message.builder("r" + i).content("x").build()).join().allowed()).isTrue();
      assertThat(engine.decide(Message.builder("r" + i).content("x").build()).join().allowed())
          .as("each given back once").isFalse();
    }
  }

  /** The store's bytes after {@code perRecipient} admitted decisions to each of {@code recipients}. */
  private static long storeBytes(boolean releases, int recipients, int perRecipient) {
    ManualClock clock = new ManualClock();
    MemoryStore store = MemoryStore.builder().clock(clock).build();
    Engine.Builder b = Engine.builder(store).clock(clock).policy(POLICY);
    Engine engine = releases ? b.build() : b.releaseHorizon(Duration.ZERO).build();
    engine.decide(Message.builder("warm-up").content("x").build()).join(); // the id key, stored once
    long before = store.bytes();
    for (int k = 0; k < perRecipient; k++) {
      for (int i = 0; i < recipients; i++) {
        assertThat(engine.decide(Message.builder("r" + i).content("x" + k).build()).join().allowed()).isTrue();
      }
      clock.advance(1_000);
    }
    return store.bytes() - before;
  }
}
