package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The stated error bound of {@code sliding-counter} (docs/algorithms.md): it never admits more than
 * L in any window of length W, and it refuses only what an exact log over W + w - 1 ms would refuse,
 * where w = ceil(W / precision).
 */
class SlidingCounterBoundProperties {

  @Property(tries = 200)
  void neverOverAdmitsAndRefusesOnlyWithinTheBound(@ForAll long seed) {
    Random random = new Random(seed);
    long limit = 1 + random.nextInt(10);
    long window = 1000 + random.nextInt(120_000);
    int precision = 1 + random.nextInt(60);
    long width = (window + precision - 1) / precision;
    Rule rule = new Rule("counter", null, limit, Duration.ofMillis(window), List.of(Dimension.RECIPIENT), null, null,
        Algorithm.SLIDING_COUNTER, precision, null, null);
    ManualClock clock = new ManualClock();
    Engine engine = Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock)
        .policy(new Policy("default", 1, List.of(rule))).build();
    List<long[]> admitted = new ArrayList<>(); // {time, cost}
    long now = ManualClock.START;
    int refusals = 0;
    for (int step = 0; step < 400; step++) {
      now += random.nextInt(3) == 0 ? 0 : random.nextInt((int) Math.max(2, window / 8));
      clock.set(now);
      long cost = random.nextInt(5) == 0 ? 2 : 1;
      Decision d = engine.decide(Message.builder("r").cost(cost).build()).join();
      long exactInWindow = sum(admitted, now - window, now);
      long exactInLongerWindow = sum(admitted, now - (window + width - 1), now);
      if (d.allowed()) {
        assertThat(exactInWindow + cost).as("never more than L in any window W").isLessThanOrEqualTo(limit);
        admitted.add(new long[] {now, cost});
      } else {
        refusals++;
        assertThat(exactInLongerWindow + cost).as("refused only if the log over W + w - 1 refuses").isGreaterThan(limit);
      }
    }
    assertThat(refusals + admitted.size()).isEqualTo(400);
  }

  /** Admitted cost in (from, to]. */
  private static long sum(List<long[]> events, long from, long to) {
    long s = 0;
    for (long[] e : events) {
      if (e[0] > from && e[0] <= to) {
        s += e[1];
      }
    }
    return s;
  }
}
