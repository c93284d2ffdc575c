package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.StoreException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Caller times are not monotonic across callers: a request at a later time must never expire a
 * counter of another partition that a request at an earlier time still needs (a replay on
 * two deciders let a recipient get 57 messages under a 50-per-day rule).
 */
class MemoryStoreSweepTest {
  private static final long DAY = 86_400_000L;
  private static final long HOUR = 3_600_000L;
  private static final CounterSpec ONE_PER_DAY = CounterSpec.single(Algorithm.SLIDING_LOG, 1, DAY, true, 0);

  private static PartitionRequest decideAt(String partition, long time) {
    return PartitionRequest.of(partition.getBytes(StandardCharsets.UTF_8), Operation.DECIDE, time, 1,
        List.of(new CounterRequest(new byte[] {1}, ONE_PER_DAY, 0)));
  }

  @Test
  void aRequestHoursAheadNeverSweepsAwayAnotherPartitionsCounter() {
    ManualClock clock = new ManualClock();
    MemoryStore store = MemoryStore.builder().clock(clock).segments(1).build();
    long t0 = ManualClock.START;
    clock.set(t0 + 2 * DAY); // the store's clock is ahead too (a replay's clock is its newest row)
    assertThat(store.applyNow(decideAt("slow", t0)).allowed()).isTrue();
    // another caller, two days ahead, writes enough to visit every slot of the segment many times
    for (int i = 0; i < 4_000; i++) {
      store.applyNow(decideAt("fast" + (i % 40), t0 + 2 * DAY + i));
    }
    assertThat(store.applyNow(decideAt("slow", t0 + HOUR)).allowed())
        .as("the slow caller's counter of one hour ago still counts").isFalse();
  }

  @Test
  void theFullSweepBeforeRefusingANewPartitionKeepsCountersAnEarlierCallerNeeds() {
    ManualClock clock = new ManualClock();
    long t0 = ManualClock.START;
    clock.set(t0 + 2 * DAY);
    MemoryStore store = MemoryStore.builder().clock(clock).segments(1).maxBytes(4_000).build();
    int held = 0;
    while (true) {
      try {
        store.applyNow(decideAt("slow" + held, t0));
        held++;
      } catch (StoreException e) {
        assertThat(e.reason()).isEqualTo(StoreException.Reason.FULL);
        break;
      }
    }
    assertThat(held).isGreaterThan(2);
    assertThatThrownBy(() -> store.applyNow(decideAt("fast", t0 + 2 * DAY)))
        .as("full: nothing may be dropped by the fast caller's time").isInstanceOf(StoreException.class);
    for (int i = 0; i < held; i++) {
      assertThat(store.applyNow(decideAt("slow" + i, t0 + HOUR)).allowed()).as("slow%d", i).isFalse();
    }
    // the callers promise that nothing earlier than t0 + 25 h follows: now those counters may go
    store.advanceCallerTimeFloor(t0 + DAY + HOUR);
    assertThat(store.applyNow(decideAt("fast", t0 + 2 * DAY)).allowed()).isTrue();
    assertThat(store.size()).as("the full sweep dropped every slow partition, by the floor").isEqualTo(1);
  }

  @Test
  void theFloorOnlyRisesAndNeverPassesTheStoresClock() {
    ManualClock clock = new ManualClock();
    long t0 = ManualClock.START;
    clock.set(t0);
    MemoryStore store = MemoryStore.builder().clock(clock).segments(1).build();
    store.applyNow(decideAt("a", t0 - 2 * DAY));
    store.advanceCallerTimeFloor(t0 + 10 * DAY);
    store.advanceCallerTimeFloor(t0 - 5 * DAY);
    assertThat(store.sweepTime()).isEqualTo(t0 - MemoryStore.DEFAULT_CLOCK_STEP_GRACE_MS);
    assertThat(store.evictExpired()).isEqualTo(1);
  }

  @Test
  void twoThreadsOnPartitionsOfOneSegmentHoursApartNeverOverAdmit() throws Exception {
    ManualClock clock = new ManualClock();
    long t0 = ManualClock.START;
    clock.set(t0 + 30 * DAY);
    MemoryStore store = MemoryStore.builder().clock(clock).segments(1).build();
    int partitions = 50;
    int rounds = 200;
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      CountDownLatch start = new CountDownLatch(1);
      // each thread owns its partitions and walks its own time, one hour per round; the "fast"
      // thread runs 20 days ahead of the "slow" one. Limit 1 per day, a message every hour: each
      // partition may admit exactly once per 24 rounds.
      Future<Integer> slow = pool.submit(() -> admissions(store, start, "s", partitions, rounds, t0));
      Future<Integer> fast = pool.submit(() -> admissions(store, start, "f", partitions, rounds, t0 + 20 * DAY));
      start.countDown();
      int expected = partitions * ((rounds + 23) / 24);
      assertThat(slow.get(60, TimeUnit.SECONDS)).isEqualTo(expected);
      assertThat(fast.get(60, TimeUnit.SECONDS)).isEqualTo(expected);
    } finally {
      pool.shutdownNow();
    }
  }

  private static int admissions(MemoryStore store, CountDownLatch start, String prefix, int partitions, int rounds,
      long from) throws InterruptedException {
    start.await();
    int admitted = 0;
    for (int r = 0; r < rounds; r++) {
      for (int p = 0; p < partitions; p++) {
        if (store.applyNow(decideAt(prefix + p, from + r * HOUR + p)).allowed()) {
          admitted++;
        }
      }
    }
    return admitted;
  }

  @Test
  void requestsOnTheStoresOwnClockStillSweep() {
    ManualClock clock = new ManualClock();
    MemoryStore store = MemoryStore.builder().clock(clock).segments(1).build();
    store.applyNow(decideAt("a", PartitionRequest.STORE_TIME));
    clock.set(ManualClock.START + 2 * DAY);
    assertThat(store.evictExpired()).isEqualTo(1);
    assertThat(store.size()).isZero();
  }

  /** One message per second: expires a second after it was admitted. */
  private static PartitionRequest onePerSecond(String partition) {
    return PartitionRequest.of(partition.getBytes(StandardCharsets.UTF_8), Operation.DECIDE, PartitionRequest.STORE_TIME,
        1, List.of(new CounterRequest(new byte[] {2}, CounterSpec.single(Algorithm.SLIDING_LOG, 1, 1_000, true, 0), 0)));
  }

  @Test
  void aClockSteppedBackAfterThePartitionExpiredStillFindsThePartitionsTime() {
    for (long grace : new long[] {0, MemoryStore.DEFAULT_CLOCK_STEP_GRACE_MS}) {
      ManualClock clock = new ManualClock();
      long t0 = ManualClock.START;
      clock.set(t0);
      MemoryStore store = MemoryStore.builder().clock(clock).segments(1)
          .clockStepGrace(java.time.Duration.ofMillis(grace)).build();
      assertThat(store.applyNow(onePerSecond("p")).allowed()).isTrue();
      clock.set(t0 + 2_000); // the counter expired at t0 + 1 s; the sweep runs
      store.evictExpired();
      clock.set(t0 - 500); // then the clock steps back 2.5 s
      PartitionResult r = store.applyNow(onePerSecond("p"));
      if (grace == 0) {
        // the documented limit: after a step back larger than the grace, a partition swept in the
        // meantime is new again, and decided at the request's own time
        assertThat(r.time()).isEqualTo(t0 - 500);
      } else {
        assertThat(r.time()).as("decided at the partition's latest time").isEqualTo(t0);
        assertThat(r.allowed()).as("the message of t0 still counts at t0").isFalse();
      }
    }
  }
}
