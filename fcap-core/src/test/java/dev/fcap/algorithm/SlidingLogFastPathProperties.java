package dev.fcap.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterSpec;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The cost-1 fast path of {@link SlidingLog#record} writes exactly the bytes of the general
 * decode-insert-prune-encode path, whatever the log held before: the Lua mirror implements the
 * general path, so the two must never differ.
 */
class SlidingLogFastPathProperties {
  private static final long T0 = 1_700_000_000_000L;

  @Property(tries = 500)
  void fastPathEqualsGeneralPath(@ForAll("specs") CounterSpec spec, @ForAll("steps") List<long[]> steps) {
    byte[] state = null;
    long now = T0;
    for (long[] step : steps) {
      now += step[0];
      long cost = step[1];
      byte[] general = SlidingLog.recordGeneral(state, spec, now, cost);
      byte[] viaRecord = SlidingLog.INSTANCE.record(state, spec, 0, now, cost);
      assertThat(viaRecord).as("record at +%d ms, cost %d", now - T0, cost).isEqualTo(general);
      state = general;
    }
  }

  @Provide
  Arbitrary<CounterSpec> specs() {
    return Arbitraries.of(
        new CounterSpec(Algorithm.SLIDING_LOG, new long[] {15, 50}, new long[] {60_000, 86_400_000},
            new boolean[] {true, true}, 0),
        new CounterSpec(Algorithm.SLIDING_LOG, new long[] {2, 5}, new long[] {59_000, 3_540_000},
            new boolean[] {true, false}, 0),
        CounterSpec.single(Algorithm.SLIDING_LOG, 3, 1_000, true, 0),
        CounterSpec.single(Algorithm.SLIDING_LOG, 4, 60L * 86_400_000, true, 0)); // wide ages possible
  }

  @Provide
  Arbitrary<List<long[]>> steps() {
    return TimeSteps.of();
  }
}
