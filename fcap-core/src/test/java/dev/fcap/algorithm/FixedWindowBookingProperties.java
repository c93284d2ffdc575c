package dev.fcap.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterSpec;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A fixed window that holds messages booked for later windows answers what the definition says,
 * checked against the whole history: a message at x is admitted iff the window holding x holds at
 * most L with it, and is booked at the first instant from x whose window has room. Decisions now,
 * bookings and releases mixed, time never going back (a store decides a partition at its latest
 * write's time at the earliest).
 */
class FixedWindowBookingProperties {
  private static final long T0 = 1_700_000_000_000L;

  @Property(tries = 400)
  void bookedWindowsAnswerTheDefinition(@ForAll("limits") long limit, @ForAll("windows") long window,
      @ForAll("steps") List<long[]> steps) {
    CounterSpec spec = CounterSpec.single(Algorithm.FIXED_WINDOW, limit, window, true, 0);
    byte[] state = null;
    List<long[]> history = new ArrayList<>();
    long now = T0;
    for (long[] step : steps) {
      now += step[0];
      long cost = step[1];
      long[] used = new long[1];
      long[] retryAt = new long[1];
      boolean admitted = FixedWindow.INSTANCE.evaluate(state, spec, 0, now, cost, used, retryAt, 0);
      assertThat(used[0]).as("used at +%d", now - T0).isEqualTo(held(history, window, now));
      long first = first(history, window, limit, now, cost);
      assertThat(retryAt[0]).as("retryAt at +%d", now - T0).isEqualTo(first);
      assertThat(admitted).as("admitted at +%d", now - T0).isEqualTo(first == now);
      switch ((int) step[2]) {
        case 0 -> {
          if (admitted) {
            state = FixedWindow.INSTANCE.record(state, spec, 0, now, cost);
            history.add(new long[] {now, cost});
          }
        }
        case 1 -> {
          long at = FixedWindow.INSTANCE.admitsFrom(state, 0, Bytes.length(state), spec, 0, now, cost);
          assertThat(at).as("booking at +%d", now - T0).isEqualTo(first);
          if (at != CounterAlgorithm.NEVER) {
            state = FixedWindow.INSTANCE.book(state, spec, 0, now, at, cost);
            history.add(new long[] {at, cost});
          }
        }
        default -> {
          if (!history.isEmpty()) {
            long[] gone = history.remove((int) (step[3] % history.size()));
            state = FixedWindow.INSTANCE.release(state, spec, 0, now, gone[0], gone[1]);
          }
        }
      }
      if (state != null) {
        assertThat(FixedWindow.INSTANCE.expiresAt(state, spec, 0)).as("expiry covers every live window")
            .isGreaterThanOrEqualTo(history.stream().mapToLong(e -> Math.floorDiv(e[0], window) * window + window)
                .filter(end -> end > Math.floorDiv(T0, window) * window).max().orElse(Long.MIN_VALUE));
      }
    }
  }

  private static long held(List<long[]> history, long window, long t) {
    long start = Math.floorDiv(t, window) * window;
    return history.stream().filter(e -> e[0] >= start && e[0] < start + window).mapToLong(e -> e[1]).sum();
  }

  private static long first(List<long[]> history, long window, long limit, long x, long cost) {
    if (cost > limit) {
      return CounterAlgorithm.NEVER;
    }
    for (long t = x; ; t = Math.floorDiv(t, window) * window + window) {
      if (held(history, window, t) + cost <= limit) {
        return t;
      }
    }
  }

  @Provide
  Arbitrary<Long> limits() {
    return Arbitraries.longs().between(1, 4);
  }

  @Provide
  Arbitrary<Long> windows() {
    return Arbitraries.longs().between(1, 30);
  }

  /** {elapsed ms, cost, what (0 decide, 1 book, 2 release), which}. */
  @Provide
  Arbitrary<List<long[]>> steps() {
    return Combinators.combine(Arbitraries.longs().between(0, 9), Arbitraries.longs().between(1, 2),
        Arbitraries.longs().between(0, 2), Arbitraries.longs().between(0, 1000))
        .as((elapsed, cost, what, which) -> new long[] {elapsed, cost, what, which})
        .list().ofMinSize(1).ofMaxSize(40);
  }
}
