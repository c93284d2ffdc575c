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
 * write's time at the earliest). The same over calendar periods of unequal lengths, each request
 * carrying the period that holds now and the ends of the ones after it, as the engine sends them.
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
      state = step(state, spec, 0, now, step, held(history, window, now), first(history, window, limit, now, step[1]),
          Long.MAX_VALUE, history);
      if (state != null) {
        assertThat(FixedWindow.INSTANCE.expiresAt(state, spec, 0)).as("expiry covers every live window")
            .isGreaterThanOrEqualTo(history.stream().mapToLong(e -> Math.floorDiv(e[0], window) * window + window)
                .filter(end -> end > Math.floorDiv(T0, window) * window).max().orElse(Long.MIN_VALUE));
      }
    }
  }

  /**
   * Over periods of 1 to 40 ms (a day of 23 hours after one of 24, a month of 30 days after one of 31),
   * each step's request built for the period holding its time: its start the alignment, its ends up
   * to {@code AHEAD} after it; bookings up to {@code AHEAD / 2} ahead, as a deferral's {@code notAfter}
   * lies within the ends the engine sends.
   */
  @Property(tries = 400)
  void bookedCalendarPeriodsAnswerTheDefinition(@ForAll("limits") long limit, @ForAll("lengths") List<Long> lengths,
      @ForAll("steps") List<long[]> steps) {
    List<Long> bounds = new ArrayList<>(List.of(T0));
    for (int i = 0; bounds.get(i) < T0 + 2_000; i++) { // past the last step (40 of at most 9 ms) and AHEAD
      bounds.add(bounds.get(i) + lengths.get(i % lengths.size()));
    }
    long[] starts = bounds.stream().mapToLong(Long::longValue).toArray();
    byte[] state = null;
    List<long[]> history = new ArrayList<>();
    long now = T0;
    for (long[] step : steps) {
      now += step[0];
      int p = periodOf(starts, now);
      long align = starts[p];
      List<Long> ends = new ArrayList<>();
      for (int e = p + 1; e < starts.length && (ends.isEmpty() || starts[e - 1] < now + AHEAD); e++) {
        ends.add(starts[e] - align);
      }
      CounterSpec spec = CounterSpec.single(Algorithm.FIXED_WINDOW, limit, 1, true, 0)
          .withPeriods(ends.stream().mapToLong(Long::longValue).toArray());
      state = step(state, spec, align, now, step, heldIn(history, starts, now),
          firstIn(history, starts, limit, now, step[1]), now + AHEAD / 2, history);
      if (state != null) {
        long current = starts[p];
        assertThat(FixedWindow.INSTANCE.expiresAt(state, spec, align)).as("expiry covers every live period")
            .isGreaterThanOrEqualTo(history.stream().filter(e -> e[0] >= current)
                .mapToLong(e -> starts[periodOf(starts, e[0]) + 1]).max().orElse(Long.MIN_VALUE));
      }
    }
  }

  /**
   * One step at {@code now}: the decision checked against {@code held} and {@code first}, what the
   * definition says the window holds and the first instant with room, then, as {@code step} says, a
   * record of it, a booking (at most {@code latest}) or a release of a random message of
   * {@code history} (kept up to date); the state after it.
   */
  private static byte[] step(byte[] state, CounterSpec spec, long align, long now, long[] step, long held, long first,
      long latest, List<long[]> history) {
    long cost = step[1];
    long[] used = new long[1];
    long[] retryAt = new long[1];
    boolean admitted = FixedWindow.INSTANCE.evaluate(state, spec, align, now, cost, used, retryAt, 0);
    assertThat(used[0]).as("used at +%d", now - T0).isEqualTo(held);
    assertThat(retryAt[0]).as("retryAt at +%d", now - T0).isEqualTo(first);
    assertThat(admitted).as("admitted at +%d", now - T0).isEqualTo(first == now);
    switch ((int) step[2]) {
      case 0 -> {
        if (admitted) {
          state = FixedWindow.INSTANCE.record(state, spec, align, now, cost);
          history.add(new long[] {now, cost});
        }
      }
      case 1 -> {
        long at = FixedWindow.INSTANCE.admitsFrom(state, 0, Bytes.length(state), spec, align, now, cost);
        assertThat(at).as("booking at +%d", now - T0).isEqualTo(first);
        if (at != CounterAlgorithm.NEVER && at <= latest) {
          state = FixedWindow.INSTANCE.book(state, spec, align, now, at, cost);
          history.add(new long[] {at, cost});
        }
      }
      default -> {
        if (!history.isEmpty()) {
          long[] gone = history.remove((int) (step[3] % history.size()));
          state = FixedWindow.INSTANCE.release(state, spec, align, now, gone[0], gone[1]);
        }
      }
    }
    return state;
  }

  /** How far ahead of a request's time its periods' ends reach. */
  private static final long AHEAD = 120;

  private static int periodOf(long[] starts, long t) {
    int p = 0;
    while (p + 1 < starts.length && starts[p + 1] <= t) {
      p++;
    }
    return p;
  }

  private static long heldIn(List<long[]> history, long[] starts, long t) {
    int p = periodOf(starts, t);
    return history.stream().filter(e -> e[0] >= starts[p] && e[0] < starts[p + 1]).mapToLong(e -> e[1]).sum();
  }

  private static long firstIn(List<long[]> history, long[] starts, long limit, long x, long cost) {
    if (cost > limit) {
      return CounterAlgorithm.NEVER;
    }
    for (long t = x; ; t = starts[periodOf(starts, t) + 1]) {
      if (heldIn(history, starts, t) + cost <= limit) {
        return t;
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

  /** Period lengths, repeated: unequal, so a window computed from the current period's length is wrong. */
  @Provide
  Arbitrary<List<Long>> lengths() {
    return Arbitraries.longs().between(1, 40).list().ofMinSize(1).ofMaxSize(7);
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
