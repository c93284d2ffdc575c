package dev.fcap.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterSpec;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * An algorithm reads a state where it lies (a slice of a store's record, {@link CounterStates})
 * exactly as it reads the same state as an array of its own: every algorithm, every layout its
 * states take (a sliding log's wide ages and costs, a sliding counter or a GCRA state written under
 * another window, a calendar window's alignment), each state placed at a random offset among random
 * bytes, so a read that forgets the offset reads the wrong bytes. And a state recorded into the
 * states' scratch ({@link CounterAlgorithm#record(CounterStates, int, CounterSpec, long, long, long)},
 * over random bytes left there) is the state recorded as an array of its own, byte for byte, and
 * expires when it does.
 */
class CounterStatesProperties {
  private static final long T0 = 1_700_000_000_000L;

  @Property(tries = 400)
  void aSliceReadsAsItsOwnArray(@ForAll("specs") List<CounterSpec> specs, @ForAll("steps") List<long[]> steps,
      @ForAll long seed) {
    Random random = new Random(seed);
    CounterAlgorithm algorithm = CounterAlgorithm.of(specs.get(0).algorithm());
    long align = random.nextInt(3) == 0 ? random.nextInt(86_400_000) : 0;
    byte[] state = null;
    long now = T0;
    int step = 0;
    CounterStates reused = new CounterStates(1); // as a store segment's: its scratch keeps older bytes
    for (long[] s : steps) {
      now += s[0];
      long cost = s[1];
      CounterSpec spec = specs.get(step++ % specs.size()); // an edited rule reads a state written under another
      CounterStates slices = new CounterStates(1).reset(1);
      byte[] record = embed(state, random, slices);
      int checks = spec.checks();
      long[] used = new long[checks];
      long[] retryAt = new long[checks];
      boolean admits = algorithm.evaluate(state, spec, align, now, cost, used, retryAt, 0);
      long[] usedInPlace = new long[checks + 1];
      long[] retryInPlace = new long[checks + 1];
      boolean admitsInPlace = algorithm.evaluate(slices.source(0), slices.from(0), slices.length(0), spec, align, now,
          cost, usedInPlace, retryInPlace, 1);
      String at = "step " + step + " at +" + (now - T0) + " ms, cost " + cost + ", state " + hex(state);
      assertThat(admitsInPlace).as(at).isEqualTo(admits);
      assertThat(java.util.Arrays.copyOfRange(usedInPlace, 1, checks + 1)).as(at).isEqualTo(used);
      assertThat(java.util.Arrays.copyOfRange(retryInPlace, 1, checks + 1)).as(at).isEqualTo(retryAt);
      byte[] next = algorithm.record(state, spec, align, now, cost);
      byte[] nextInPlace = algorithm.record(record, slices.from(0), slices.length(0), spec, align, now, cost);
      assertThat(nextInPlace).as(at).isEqualTo(next);
      assertThat(slices.get(0)).as("the slice's own copy").isEqualTo(state);
      assertThat(algorithm.expiresAt(record, slices.from(0), slices.length(0), spec, align)).as(at)
          .isEqualTo(algorithm.expiresAt(state, spec, align));
      leaveJunk(reused, random);
      reused.reset(1);
      reused.slice(0, record, slices.from(0), slices.length(0));
      algorithm.record(reused, 0, spec, align, now, cost);
      assertThat(reused.get(0)).as(at + ", recorded into the states").isEqualTo(next);
      assertThat(algorithm.expiresAt(reused.source(0), reused.from(0), reused.length(0), spec, align)).as(at)
          .isEqualTo(algorithm.expiresAt(next, spec, align));
      if (admits || random.nextInt(4) == 0) { // mostly what a store keeps: admitted messages
        state = next;
      }
    }
  }

  /** Random bytes where the next state recorded into {@code states}' scratch will be written. */
  private static void leaveJunk(CounterStates states, Random random) {
    states.reset(1);
    byte[] scratch = states.newState(0, 200);
    for (int i = 0; i < 200; i++) {
      scratch[states.from(0) + i] = (byte) random.nextInt();
    }
  }

  /** {@code state} at a random offset in random bytes, as slice 0 of {@code slices}; the array. */
  private static byte[] embed(byte[] state, Random random, CounterStates slices) {
    int length = state == null ? 0 : state.length;
    int before = random.nextInt(40);
    byte[] record = new byte[before + length + random.nextInt(40)];
    random.nextBytes(record);
    if (state != null) {
      System.arraycopy(state, 0, record, before, length);
    }
    slices.slice(0, record, before, length);
    return record;
  }

  private static String hex(byte[] state) {
    return state == null ? "empty" : java.util.HexFormat.of().formatHex(state);
  }

  /** One or two specs of one algorithm (two: the rule edited between steps). */
  @Provide
  Arbitrary<List<CounterSpec>> specs() {
    return Arbitraries.of(
        List.of(new CounterSpec(Algorithm.SLIDING_LOG, new long[] {15, 50}, new long[] {60_000, 86_400_000},
            new boolean[] {true, true}, 0)),
        List.of(new CounterSpec(Algorithm.SLIDING_LOG, new long[] {2, 5}, new long[] {59_000, 3_540_000},
            new boolean[] {true, false}, 0)),
        List.of(CounterSpec.single(Algorithm.SLIDING_LOG, 4, 60L * 86_400_000, true, 0)), // wide ages
        List.of(CounterSpec.single(Algorithm.SLIDING_COUNTER, 20, 60_000, true, 60),
            CounterSpec.single(Algorithm.SLIDING_COUNTER, 20, 3_600_000, true, 10)), // another width
        List.of(CounterSpec.single(Algorithm.FIXED_WINDOW, 5, 60_000, true, 0),
            CounterSpec.single(Algorithm.FIXED_WINDOW, 3, 86_400_000, false, 0)),
        List.of(CounterSpec.single(Algorithm.GCRA, 10, 60_000, true, 0),
            CounterSpec.single(Algorithm.GCRA, 7, 1_000, true, 0))); // another interval
  }

  @Provide
  Arbitrary<List<long[]>> steps() {
    return TimeSteps.of();
  }
}
