package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.StoreException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** What the kit cannot see: the table's bookkeeping, expiry and the behaviour when full. */
class MemoryStoreBehaviourTest {
  private static final CounterSpec ONE_PER_MINUTE = CounterSpec.single(Algorithm.SLIDING_LOG, 1, 60_000, true, 0);

  private static PartitionRequest decide(String partition) {
    return PartitionRequest.of(partition.getBytes(StandardCharsets.UTF_8), Operation.DECIDE, PartitionRequest.STORE_TIME,
        1, List.of(new CounterRequest(new byte[] {1}, ONE_PER_MINUTE, 0)));
  }

  @Test
  void theTableAgreesWithAModelUnderRandomInsertsAndDeletes() {
    ManualClock clock = new ManualClock();
    MemoryStore store = MemoryStore.builder().clock(clock).segments(1).build();
    Map<String, Boolean> model = new HashMap<>();
    Random random = new Random(42);
    for (int i = 0; i < 20_000; i++) {
      String key = "p" + random.nextInt(500);
      if (random.nextInt(3) == 0) {
        assertThat(store.delete(key.getBytes(StandardCharsets.UTF_8)).join()).isEqualTo(model.remove(key) != null);
      } else {
        boolean allowed = store.apply(decide(key)).join().allowed();
        assertThat(allowed).as("op %d on %s", i, key).isEqualTo(!model.containsKey(key));
        model.put(key, true);
      }
    }
    assertThat(store.size()).isEqualTo(model.size());
    for (int k = 0; k < 500; k++) {
      String key = "p" + k;
      assertThat(store.read(key.getBytes(StandardCharsets.UTF_8)).join().counters().isEmpty())
          .isEqualTo(!model.containsKey(key));
    }
  }

  @Test
  void idlePartitionsExpireAndAreSwept() {
    ManualClock clock = new ManualClock();
    MemoryStore store = MemoryStore.builder().clock(clock).segments(2).build();
    for (int i = 0; i < 1000; i++) {
      store.apply(decide("r" + i)).join();
    }
    assertThat(store.size()).isEqualTo(1000);
    long bytes = store.bytes();
    assertThat(bytes).isPositive();
    clock.advance(60_000);
    assertThat(store.read("r1".getBytes(StandardCharsets.UTF_8)).join().counters()).isEmpty();
    assertThat(store.evictExpired()).as("kept for a clock that steps back").isZero();
    clock.advance(MemoryStore.DEFAULT_CLOCK_STEP_GRACE_MS);
    assertThat(store.evictExpired()).isEqualTo(1000);
    assertThat(store.size()).isZero();
    assertThat(store.bytes()).isLessThan(bytes);
  }

  @Test
  void whenFullNewPartitionsAreRefusedAndHeldOnesKeepWorking() {
    ManualClock clock = new ManualClock();
    MemoryStore store = MemoryStore.builder().clock(clock).segments(1).maxBytes(4096).build();
    int held = 0;
    while (true) {
      try {
        store.apply(decide("r" + held)).join();
        held++;
      } catch (CompletionException e) {
        // room frees when the first counter expires (a minute), by the sweep's time (the grace later)
        assertThat(e.getCause()).isInstanceOfSatisfying(StoreException.Full.class, se -> {
          assertThat(se.reason()).isEqualTo(StoreException.Reason.FULL);
          assertThat(se.retryAfterMs()).isEqualTo(60_000 + MemoryStore.DEFAULT_CLOCK_STEP_GRACE_MS);
        });
        break;
      }
    }
    assertThat(held).isBetween(10, 200);
    assertThat(store.rejected()).isEqualTo(1);
    assertThat(store.size()).isEqualTo(held);
    // partitions already held are still decided (and still refuse what they must)
    assertThat(store.apply(decide("r0")).join().allowed()).isFalse();
    clock.advance(30_000);
    assertThatThrownBy(() -> store.apply(decide("new")).join()).cause().isInstanceOfSatisfying(
        StoreException.Full.class, se -> assertThat(se.retryAfterMs())
            .isEqualTo(30_000 + MemoryStore.DEFAULT_CLOCK_STEP_GRACE_MS));
    // once counters expire (and the grace for a clock stepping back has passed), room comes back
    // without evicting anything live
    clock.advance(30_000 + MemoryStore.DEFAULT_CLOCK_STEP_GRACE_MS);
    assertThat(store.apply(decide("new")).join().allowed()).isTrue();
  }

  @Test
  void theBoundHoldsWithTheTablesCountedAndAFullStoreRefusesOnlyNewPartitions() {
    ManualClock clock = new ManualClock();
    long maxBytes = 64 << 10;
    MemoryStore store = MemoryStore.builder().clock(clock).segments(16).maxBytes(maxBytes).build();
    Random random = new Random(7);
    java.util.Set<String> held = new java.util.HashSet<>();
    int refused = 0;
    for (int i = 0; i < 20_000; i++) {
      String recipient = "recipient-" + random.nextInt(1_000_000);
      try {
        store.apply(decide(recipient)).join();
        held.add(recipient);
      } catch (CompletionException e) {
        refused++;
      }
      assertThat(store.bytes()).as("after %d requests", i).isLessThanOrEqualTo(maxBytes);
    }
    assertThat(refused).isPositive();
    assertThat(store.rejected()).isEqualTo(refused);
    // full: within a few segments' worth of the bound, not far below it
    assertThat(store.bytes()).isGreaterThan(maxBytes * 3 / 4);
    assertThat(store.size()).isEqualTo(held.size());
  }

  @Test
  void checkNeverCreatesAPartition() {
    MemoryStore store = MemoryStore.builder().clock(new ManualClock()).build();
    PartitionRequest check = PartitionRequest.of("x".getBytes(StandardCharsets.UTF_8), Operation.CHECK,
        PartitionRequest.STORE_TIME, 1, List.of(new CounterRequest(new byte[] {1}, ONE_PER_MINUTE, 0)));
    assertThat(store.apply(check).join().allowed()).isTrue();
    assertThat(store.size()).isZero();
  }

  /** A large sliding log (above LargeLog.LARGE_FROM): it lives beside the records, in the segment's table. */
  private static final CounterSpec LARGE = CounterSpec.single(Algorithm.SLIDING_LOG, 5_000, 3_600_000, true, 0);

  /** A store of 4 KiB filled with recipients until it refuses the next as FULL. */
  private static MemoryStore full(ManualClock clock) {
    MemoryStore store = MemoryStore.builder().clock(clock).segments(1).maxBytes(4096).build();
    for (int held = 0; ; held++) {
      try {
        store.apply(decide("r" + held)).join();
      } catch (CompletionException e) {
        return store;
      }
    }
  }

  @Test
  void aNewPartitionRefusedAsFullCountsNothingInItsLargeLog() {
    ManualClock clock = new ManualClock();
    MemoryStore store = full(clock);
    PartitionRequest channel = PartitionRequest.of("channel".getBytes(StandardCharsets.UTF_8), Operation.DECIDE,
        PartitionRequest.STORE_TIME, 1, List.of(new CounterRequest(new byte[] {1}, ONE_PER_MINUTE, 0),
            new CounterRequest(new byte[] {2}, LARGE, 0)));
    assertThatThrownBy(() -> store.apply(channel).join()).hasCauseInstanceOf(StoreException.class);
    clock.advance(60_000 + MemoryStore.DEFAULT_CLOCK_STEP_GRACE_MS); // the others expire: room again
    assertThat(store.apply(channel.asCheck()).join().used()[1]).as("the refused decision counted nothing").isZero();
  }

  @Test
  void newPartitionsHoldingOnlyALargeLogAreRefusedWhenFull() {
    // A rule keyed by the sender alone, with a large limit: each new sender's partition holds only a
    // large log. A full store must refuse new ones as it refuses new recipients, or memory grows with
    // the count of senders past maxBytes.
    ManualClock clock = new ManualClock();
    MemoryStore store = full(clock);
    int refused = 0;
    long bytesWhenFull = -1;
    for (int sender = 0; sender < 100; sender++) {
      PartitionRequest onlyLarge = PartitionRequest.of(("sender" + sender).getBytes(StandardCharsets.UTF_8),
          Operation.DECIDE, PartitionRequest.STORE_TIME, 1, List.of(new CounterRequest(new byte[] {2}, LARGE, 0)));
      try {
        store.apply(onlyLarge).join();
      } catch (CompletionException e) {
        assertThat(e).hasCauseInstanceOf(StoreException.class);
        assertThat(((StoreException) e.getCause()).reason()).isEqualTo(StoreException.Reason.FULL);
        bytesWhenFull = refused++ == 0 ? store.bytes() : bytesWhenFull;
      }
    }
    // the room left by the fill (less than a recipient's record) may still take one sender's first entry
    assertThat(refused).as("new senders refused while full").isGreaterThanOrEqualTo(99);
    assertThat(store.bytes()).as("no large log written once full").isEqualTo(bytesWhenFull);
  }
}
