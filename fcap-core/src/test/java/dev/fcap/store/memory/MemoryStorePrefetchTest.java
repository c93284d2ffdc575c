package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link MemoryStore#prefetch}: a hint that reads without the lock and must change nothing, whatever
 * it is handed (partitions held or not, null entries, store-private keys, long keys, more than it
 * reads), and must not fail while other threads grow, shrink and rewrite the tables it reads; and
 * {@link MemoryStore#applyAll}, which hints before it applies, answers as {@code apply} does.
 */
class MemoryStorePrefetchTest {
  private static final long MINUTE = 60_000;
  private static final CounterSpec LOG = CounterSpec.single(Algorithm.SLIDING_LOG, 3, MINUTE, true, 0);

  @Test
  void aStoreHandedHintsAnswersAsOneHandedNone() {
    MemoryStore hinted = MemoryStore.builder().clock(new ManualClock(ManualClock.START)).segments(4).build();
    MemoryStore plain = MemoryStore.builder().clock(new ManualClock(ManualClock.START)).segments(4).build();
    Random random = new Random(20261124);
    long time = ManualClock.START;
    for (int i = 0; i < 20_000; i++) {
      time += random.nextInt(3_000);
      if (i % 7 == 0) {
        byte[][] hints = hints(random);
        hinted.prefetch(hints, random.nextInt(hints.length + 1));
      }
      PartitionRequest request = request(random, time);
      PartitionResult a = hinted.applyNow(request);
      PartitionResult b = plain.applyNow(request);
      assertThat(a.allowed()).as("request %d", i).isEqualTo(b.allowed());
      assertThat(a.time()).isEqualTo(b.time());
      for (int c = 0; c < a.checks(); c++) {
        assertThat(a.used(c)).as("request %d, check %d", i, c).isEqualTo(b.used(c));
      }
    }
  }

  @Test
  void applyAllAnswersAsApplyDoesOneByOne() {
    // batches around the 16 read together: shorter, exactly as long, longer, several partitions twice
    MemoryStore batched = MemoryStore.builder().clock(new ManualClock(ManualClock.START)).segments(4).build();
    MemoryStore single = MemoryStore.builder().clock(new ManualClock(ManualClock.START)).segments(4).build();
    Random random = new Random(7);
    long time = ManualClock.START;
    for (int b = 0; b < 500; b++) {
      time += random.nextInt(5_000);
      List<PartitionRequest> batch = new ArrayList<>();
      int size = 1 + random.nextInt(3 * MemoryStore.AHEAD);
      for (int i = 0; i < size; i++) {
        batch.add(request(random, time));
      }
      List<PartitionResult> answers = batched.applyAll(batch).stream().map(f -> f.join()).toList();
      assertThat(answers).hasSize(size);
      for (int i = 0; i < size; i++) {
        PartitionResult expected = single.applyNow(batch.get(i));
        assertThat(answers.get(i).allowed()).as("batch %d, request %d", b, i).isEqualTo(expected.allowed());
        for (int c = 0; c < expected.checks(); c++) {
          assertThat(answers.get(i).used(c)).as("batch %d, request %d", b, i).isEqualTo(expected.used(c));
        }
      }
    }
  }

  @Test
  void hintsReadWhileOtherThreadsResizeAndRewriteTheTables() throws Exception {
    // one segment: every insert, delete and sweep changes the arrays the hints read without the lock
    MemoryStore store = MemoryStore.builder().clock(new ManualClock(ManualClock.START)).segments(1).build();
    AtomicBoolean writing = new AtomicBoolean(true);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<Integer> hints = pool.submit(() -> {
        Random random = new Random(1);
        int calls = 0;
        while (writing.get() && calls < 5_000_000) {
          byte[][] keys = hints(random);
          store.prefetch(keys, keys.length);
          calls++;
        }
        return calls;
      });
      Future<?> writes = pool.submit(() -> {
        Random random = new Random(2);
        try {
          for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 5_000; i++) { // the table grows through several sizes
              store.applyNow(request(("w" + i).getBytes(StandardCharsets.UTF_8), ManualClock.START + round, random));
            }
            for (int i = 0; i < 5_000; i++) { // and shrinks back as it empties
              store.delete(("w" + i).getBytes(StandardCharsets.UTF_8)).join();
            }
          }
        } finally {
          writing.set(false);
        }
      });
      writes.get();
      assertThat(hints.get()).as("hints handed while the tables changed").isPositive();
      assertThat(store.size()).isZero();
    } finally {
      pool.shutdownNow();
    }
  }

  /** Partitions held and not, null entries, a store-private key, a long key; sometimes more than a call reads. */
  private static byte[][] hints(Random random) {
    byte[][] keys = new byte[random.nextInt(4) == 0 ? 100 : 1 + random.nextInt(16)][];
    for (int k = 0; k < keys.length; k++) {
      keys[k] = switch (random.nextInt(6)) {
        case 0 -> null;
        case 1 -> new byte[] {(byte) 0xFE, 1, 2, 3};
        case 2 -> new byte[300 + random.nextInt(50)];
        case 3 -> ("absent" + random.nextInt(1_000)).getBytes(StandardCharsets.UTF_8);
        default -> ("r" + random.nextInt(40)).getBytes(StandardCharsets.UTF_8);
      };
    }
    return keys;
  }

  private static PartitionRequest request(Random random, long time) {
    return request(("r" + random.nextInt(40)).getBytes(StandardCharsets.UTF_8), time, random);
  }

  private static PartitionRequest request(byte[] partition, long time, Random random) {
    List<CounterRequest> counters = new ArrayList<>();
    counters.add(new CounterRequest(new byte[] {(byte) random.nextInt(3)}, LOG, 0));
    Operation op = random.nextInt(6) == 0 ? Operation.CHECK : Operation.DECIDE;
    return new PartitionRequest(partition, op, time, 1, counters, 0);
  }
}
