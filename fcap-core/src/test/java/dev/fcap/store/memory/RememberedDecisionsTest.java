package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Remembered decisions (release records, message ids) are records of their own beside their
 * partition: a shared partition that remembers thousands of decisions is read and written in the
 * same bytes as one that remembers none, and a reset forgets them all.
 */
class RememberedDecisionsTest {
  private static final byte[] CHANNEL = "s-channel".getBytes(StandardCharsets.UTF_8);
  private static final long HOUR = 3_600_000;
  /** A channel-wide count: its state has the same size at any count, so only remembered decisions could grow the record. */
  private static final CounterSpec MILLION_PER_HOUR = CounterSpec.single(Algorithm.FIXED_WINDOW, 1_000_000, HOUR, true, 0);
  private static final byte[] TAIL = {1, 2, 3};

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock();
  private final Random random = new Random(7);

  private static PartitionRequest decide(byte[] partition, Idempotency id) {
    return PartitionRequest.of(partition, Operation.DECIDE, PartitionRequest.STORE_TIME, 1,
        List.of(new CounterRequest(new byte[] {9}, MILLION_PER_HOUR, 0))).withIdempotency(id);
  }

  private Idempotency record() {
    byte[] key = new byte[16];
    random.nextBytes(key);
    return new Idempotency(key, HOUR, TAIL, false);
  }

  private static Idempotency messageId(int n) {
    byte[] key = new byte[16];
    key[0] = (byte) n;
    key[15] = 42;
    return new Idempotency(key, HOUR, TAIL, true);
  }

  private static boolean release(MemoryStore store, byte[] partition, Idempotency id, long at) {
    return store.applyNow(decide(partition, id).asRelease(at)).allowed();
  }

  private static long used(MemoryStore store, byte[] partition) {
    return store.applyNow(decide(partition, null).asCheck()).used()[0];
  }

  @Test
  void aSharedPartitionReadsAndWritesTheSameBytesWhateverItRemembers() {
    MemoryStore store = MemoryStore.builder().clock(clock).segments(4).build();
    List<Idempotency> ids = new ArrayList<>();
    List<Long> times = new ArrayList<>();
    int[] sizes = new int[2];
    for (int i = 0; i < 5_000; i++) {
      Idempotency id = record();
      PartitionResult r = store.applyNow(decide(CHANNEL, id));
      assertThat(r.allowed()).isTrue();
      ids.add(id);
      times.add(r.time());
      if (i == 9) {
        sizes[0] = store.record(CHANNEL).length;
      }
    }
    sizes[1] = store.record(CHANNEL).length;
    // all inline, 5,000 records of ~40 bytes each grew the partition to ~200 KB, copied on every
    // decision; now the first INLINE_MAX stay in it and the rest have records of their own
    assertThat(sizes[1]).as("the partition's record after 10 and after 5,000 remembered decisions").isEqualTo(sizes[0]);
    int inline = RememberedDecisions.INLINE_MAX;
    assertThat(RecordMessages.messages(store.record(CHANNEL), clock.millis())).isEqualTo(inline);
    assertThat(store.remembered()).isEqualTo(5_000 - inline);
    assertThat(store.size()).isEqualTo(1);
    // every one is still released once, wherever it is (the first inline, the others not)
    for (int i = 0; i < ids.size(); i += 50) {
      assertThat(release(store, CHANNEL, ids.get(i), times.get(i))).as("release %d", i).isTrue();
      assertThat(release(store, CHANNEL, ids.get(i), times.get(i))).as("again %d", i).isFalse();
    }
    assertThat(used(store, CHANNEL)).isEqualTo(5_000 - 100);
    assertThat(RecordMessages.messages(store.record(CHANNEL), clock.millis())).isEqualTo(inline - 1);
    assertThat(store.remembered()).isEqualTo(5_000 - inline - 99);
    // room inline again: the next goes there
    Idempotency next = record();
    store.applyNow(decide(CHANNEL, next));
    assertThat(RecordMessages.messages(store.record(CHANNEL), clock.millis())).isEqualTo(inline);
    assertThat(store.remembered()).isEqualTo(5_000 - inline - 99);
    // past the horizon, the sweep drops them like any expired record
    clock.advance(HOUR + 2_000 + MemoryStore.DEFAULT_CLOCK_STEP_GRACE_MS);
    store.evictExpired();
    assertThat(store.remembered()).isZero();
  }

  @Test
  void aResetForgetsWhatThePartitionRememberedAndLaterDecisionsAreRememberedAgain() {
    MemoryStore store = MemoryStore.builder().clock(clock).segments(4).build();
    Idempotency before = record();
    long beforeAt = store.applyNow(decide(CHANNEL, before)).time();
    PartitionResult first = store.applyNow(decide(CHANNEL, messageId(1)));
    assertThat(store.applyNow(decide(CHANNEL, messageId(1))).replayOf()).as("a retry is answered again").isNotNull();
    assertThat(store.delete(CHANNEL).join()).isTrue();

    // releasing a decision made before the reset must not take a unit from the counts made after it
    assertThat(store.applyNow(decide(CHANNEL, null)).allowed()).isTrue();
    assertThat(release(store, CHANNEL, before, beforeAt)).isFalse();
    assertThat(used(store, CHANNEL)).isEqualTo(1);
    // the message id is decided afresh (counted), then remembered in the new generation
    PartitionResult again = store.applyNow(decide(CHANNEL, messageId(1)));
    assertThat(again.replayOf()).isNull();
    assertThat(used(store, CHANNEL)).isEqualTo(2);
    assertThat(store.applyNow(decide(CHANNEL, messageId(1))).replayOf()).isNotNull();
    assertThat(release(store, CHANNEL, messageId(1), first.time())).isTrue();
    assertThat(used(store, CHANNEL)).isEqualTo(1);

    // the generation outlives the entries written in it: one written half an hour after the reset
    // expires half an hour after every entry the reset had to hide
    clock.advance(HOUR / 2);
    Idempotency inGeneration = record();
    long inGenerationAt = store.applyNow(decide(CHANNEL, inGeneration)).time();
    clock.advance(HOUR * 3 / 4);
    store.evictExpired();
    assertThat(release(store, CHANNEL, inGeneration, inGenerationAt)).isTrue();

    // a second reset, then the generation outlives every entry: new entries are read again
    Idempotency after = record();
    store.applyNow(decide(CHANNEL, after));
    assertThat(store.delete(CHANNEL).join()).isTrue();
    clock.advance(2 * HOUR);
    store.evictExpired();
    assertThat(store.remembered()).as("entries and generations expired").isZero();
    Idempotency late = record();
    long lateAt = store.applyNow(decide(CHANNEL, late)).time();
    assertThat(release(store, CHANNEL, late, lateAt)).isTrue();
    assertThat(used(store, CHANNEL)).isZero();
  }

  @Test
  void rememberedDecisionsAndResetsSurviveARestart() {
    MemoryStore store = MemoryStore.builder().clock(clock).segments(4).durable(Durability.of(dir)).build();
    Idempotency old = record();
    long oldAt = store.applyNow(decide(CHANNEL, old)).time();
    store.delete(CHANNEL).join();
    Idempotency kept = record();
    long keptAt = store.applyNow(decide(CHANNEL, kept)).time();
    store.applyNow(decide(CHANNEL, messageId(3)));
    store.close();

    MemoryStore again = MemoryStore.builder().clock(clock).segments(4).durable(Durability.of(dir)).build();
    assertThat(again.recoveryProblems()).isEmpty();
    assertThat(again.applyNow(decide(CHANNEL, messageId(3))).replayOf()).isNotNull();
    assertThat(release(again, CHANNEL, old, oldAt)).as("from before the reset").isFalse();
    assertThat(release(again, CHANNEL, kept, keptAt)).isTrue();
    assertThat(used(again, CHANNEL)).isEqualTo(1);
    again.close();
  }
}
