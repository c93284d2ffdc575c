package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.StoreException;
import dev.fcap.store.internal.ReusableRequest;
import dev.fcap.store.internal.ReusableResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * {@code applyInto} (the embedded store answering into one answer its caller reuses) against
 * {@code apply} (a new result per request): two stores fed the same random traffic answer the same,
 * request by request, whatever the request before left in the reused answer, and though the reused
 * request's key arrays are overwritten with junk as soon as each call returns (a store that kept one
 * would read junk later). The traffic mixes every operation, every algorithm, a large log, message ids
 * and their replays, releases by message id, the claims of decisions stored as nothing, and caller
 * times that jump forward and step back.
 */
class MemoryStoreApplyIntoTest {
  private static final long MINUTE = 60_000;
  private static final long DAY = 24 * 60 * MINUTE;
  private static final List<CounterSpec> SPECS = List.of(
      new CounterSpec(Algorithm.SLIDING_LOG, new long[] {3, 7}, new long[] {MINUTE, DAY}, new boolean[] {true, true}, 0),
      CounterSpec.single(Algorithm.SLIDING_LOG, 2, 59_000, false, 0), // a shadow check
      CounterSpec.single(Algorithm.FIXED_WINDOW, 4, 10 * MINUTE, true, 0),
      CounterSpec.single(Algorithm.GCRA, 5, MINUTE, true, 0),
      CounterSpec.single(Algorithm.SLIDING_COUNTER, 6, 10 * MINUTE, true, 10),
      CounterSpec.single(Algorithm.SLIDING_LOG, 1_500, DAY, true, 0)); // above LargeLog.LARGE_FROM: a large log

  @Test
  void applyIntoAnswersAsApplyDoesRequestByRequest() {
    long start = ManualClock.START;
    MemoryStore viaApply = MemoryStore.builder().clock(new ManualClock(start)).segments(2).build();
    MemoryStore viaInto = MemoryStore.builder().clock(new ManualClock(start)).segments(2).build();
    ReusableResult out = new ReusableResult(); // one for the whole run, as an engine thread keeps it
    ReusedKeys keys = new ReusedKeys();
    Random random = new Random(20261124);
    List<PartitionRequest> admitted = new ArrayList<>();
    long time = start;
    int replays = 0;
    int incarnations = 0;
    for (int i = 0; i < 30_000; i++) {
      time += random.nextInt(10) == 0 ? -random.nextInt(5_000) : random.nextInt(20_000); // steps back too
      PartitionRequest request = random.nextInt(8) == 0 && !admitted.isEmpty()
          ? release(admitted.get(random.nextInt(admitted.size())), time, random)
          : request(random, time);
      PartitionResult expected = viaApply.apply(request).join();
      assertThat(viaInto.applyInto(keys.fill(request), out)).isTrue();
      keys.scribble(random);
      assertThat(out.toResult()).as("request %d: %s", i, request).usingRecursiveComparison().isEqualTo(expected);
      assertThat(out.checks()).isEqualTo(request.checks());
      for (int c = 0; c < out.checks(); c++) {
        assertThat(out.admits(c)).isEqualTo(expected.admits(c));
      }
      if (expected.allowed() && request.operation() == Operation.DECIDE) {
        admitted.add(request);
      }
      replays += expected.replayOf() != null ? 1 : 0;
      incarnations += expected.incarnation() != 0 ? 1 : 0;
    }
    // the traffic reached the answers a reused one could carry over from the request before
    assertThat(replays).isGreaterThan(100);
    assertThat(incarnations).isGreaterThan(100);
  }

  @Test
  void aFullStoreFailsApplyIntoAsApplysFutureFails() {
    MemoryStore store = MemoryStore.builder().clock(new ManualClock()).segments(1).maxBytes(4_096).build();
    ReusableResult out = new ReusableResult();
    int taken = 0;
    Random random = new Random(1);
    StoreException full = null;
    while (full == null && taken < 10_000) {
      PartitionRequest decide = PartitionRequest.of(("p" + taken).getBytes(StandardCharsets.UTF_8), Operation.DECIDE,
          PartitionRequest.STORE_TIME, 1, List.of(new CounterRequest(new byte[] {1}, SPECS.get(0), 0)));
      try {
        store.applyInto(new ReusableRequest().set(decide), out);
        taken++;
      } catch (StoreException e) {
        full = e;
        PartitionRequest same = decide;
        assertThatThrownBy(() -> store.apply(same).join()).isInstanceOf(CompletionException.class)
            .hasCauseInstanceOf(StoreException.class);
      }
    }
    assertThat(full).as("a 4 KB store fills up").isNotNull();
    assertThat(full.reason()).isEqualTo(StoreException.Reason.FULL);
    assertThat(taken).isPositive();
  }

  /**
   * One reused request whose keys are copies in arrays it reuses (one per key length, as an engine
   * thread's buffers), which {@link #scribble} overwrites after each call.
   */
  private static final class ReusedKeys {
    private final ReusableRequest request = new ReusableRequest();
    private final java.util.Map<Integer, byte[]> partitions = new java.util.HashMap<>();
    private final java.util.Map<Integer, byte[]> counters = new java.util.HashMap<>();

    ReusableRequest fill(PartitionRequest r) {
      request.set(copy(partitions, 0, r.partition()), r.operation(), r.time(), r.cost(), r.eventTime(), r.idempotency(),
          r.category());
      for (int i = 0; i < r.counters().size(); i++) {
        CounterRequest c = r.counters().get(i);
        request.addCounter(copy(counters, i, c.key()), c.spec(), c.alignMs());
      }
      return request;
    }

    /** The key in the buffer of its length and counter. */
    private static byte[] copy(java.util.Map<Integer, byte[]> buffers, int counter, byte[] key) {
      byte[] buffer = buffers.computeIfAbsent(counter << 16 | key.length, k -> new byte[key.length]);
      System.arraycopy(key, 0, buffer, 0, key.length);
      return buffer;
    }

    void scribble(Random random) {
      partitions.values().forEach(random::nextBytes);
      counters.values().forEach(random::nextBytes);
    }
  }

  /** A DECIDE or CHECK of some counters of one of 40 partitions, sometimes under a message id or asking for an incarnation. */
  private static PartitionRequest request(Random random, long time) {
    byte[] partition = ("r" + random.nextInt(40)).getBytes(StandardCharsets.UTF_8);
    int n = 1 + random.nextInt(3);
    List<CounterRequest> counters = new ArrayList<>(n);
    for (int j = 0; j < n; j++) {
      int spec = random.nextInt(SPECS.size());
      counters.add(new CounterRequest(new byte[] {(byte) spec, (byte) random.nextInt(2)}, SPECS.get(spec), 0));
    }
    Operation op = random.nextInt(6) == 0 ? Operation.CHECK : Operation.DECIDE;
    PartitionRequest request = new PartitionRequest(partition, op, time, 1 + random.nextInt(2), counters, 0);
    byte[] key = new byte[16];
    switch (random.nextInt(4)) {
      case 0 -> { // a message id, from few: retries are replayed
        key[0] = (byte) random.nextInt(8);
        return request.withIdempotency(new Idempotency(key, DAY, new byte[] {7, key[0]}, true));
      }
      case 1 -> { // a decision stored as nothing: its partition's incarnation
        random.nextBytes(key);
        return request.withIdempotency(new Idempotency(key, DAY, new byte[] {1}, false, 1 + random.nextInt(1_000)));
      }
      default -> {
        return request;
      }
    }
  }

  /** The release of an admitted decision: by its message id, its claim, or its counts alone. */
  private static PartitionRequest release(PartitionRequest decided, long time, Random random) {
    PartitionRequest release = decided.asRelease(decided.time() + random.nextInt(1_000)).at(time);
    Idempotency id = decided.idempotency();
    return id == null || id.replayable() || random.nextBoolean() ? release
        : release.withIdempotency(new Idempotency(id.key(), id.horizonMs(), id.tail(), false, id.incarnation()));
  }
}
