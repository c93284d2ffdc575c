package dev.fcap.algorithm;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/** Random traffic for one counter, shared by the algorithm properties. */
final class TimeSteps {
  private TimeSteps() {}

  /**
   * Steps of (time advance, cost): mostly cost 1; exact window lengths (entries reaching an age equal
   * to a window), sometimes a clock step back or a jump of weeks.
   */
  static Arbitrary<List<long[]>> of() {
    Arbitrary<Long> advance = Arbitraries.frequencyOf(
        Tuple.of(6, Arbitraries.longs().between(0, 2_000)),
        Tuple.of(2, Arbitraries.longs().between(0, 120_000)),
        Tuple.of(1, Arbitraries.longs().between(-5_000, 0)),
        Tuple.of(3, Arbitraries.of(0L, 1L, 999L, 1_000L, 59_000L, 60_000L, 3_540_000L, 86_400_000L)),
        Tuple.of(1, Arbitraries.longs().between(0, 55L * 86_400_000)));
    Arbitrary<Long> cost = Arbitraries.frequencyOf(
        Tuple.of(8, Arbitraries.just(1L)),
        Tuple.of(1, Arbitraries.longs().between(2, 4)));
    return Combinators.combine(advance, cost).as((a, c) -> new long[] {a, c}).list().ofMaxSize(80);
  }
}
