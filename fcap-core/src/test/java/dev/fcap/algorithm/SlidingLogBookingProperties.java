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
 * A sliding log that holds messages booked ahead of the present answers exactly what the plain
 * definition says, checked by brute force over every millisecond: a message at x is admitted by check
 * (L, W) iff every window (s - W, s] that would hold it, s in [x, x + W), holds at most L with it.
 * Against the whole history (nothing pruned), so a prune that forgets what a later window reads fails
 * too. Decisions now and bookings later are mixed, with releases, on small limits and windows where
 * windows overlap bookings often.
 */
class SlidingLogBookingProperties {
  private static final long T0 = 1_700_000_000_000L;

  @Property(tries = 400)
  void bookedLogsAnswerTheDefinition(@ForAll("specs") CounterSpec spec, @ForAll("steps") List<long[]> steps) {
    byte[] state = null;
    List<long[]> history = new ArrayList<>(); // {time, cost}, every live message, never pruned
    long now = T0;
    int checks = spec.checks();
    for (long[] step : steps) {
      now += step[0];
      long cost = step[1];
      long[] used = new long[checks];
      long[] retryAt = new long[checks];
      boolean admitted = SlidingLog.INSTANCE.evaluate(state, spec, 0, now, cost, used, retryAt, 0);
      for (int c = 0; c < checks; c++) {
        assertThat(used[c]).as("used of check %d at +%d", c, now - T0).isEqualTo(fullest(history, spec.windowMs(c), now));
        assertThat(retryAt[c]).as("retryAt of check %d at +%d", c, now - T0)
            .isEqualTo(earliest(history, spec, c, c + 1, now, cost));
      }
      assertThat(admitted).as("admitted at +%d", now - T0).isEqualTo(earliest(history, spec, 0, checks, now, cost) == now);
      switch ((int) step[2]) {
        case 0 -> { // a decision now
          if (admitted) {
            state = SlidingLog.INSTANCE.record(state, spec, 0, now, cost);
            history.add(new long[] {now, cost});
          }
        }
        case 1 -> { // a booking at the first admitting instant
          long at = SlidingLog.INSTANCE.admitsFrom(state, 0, Bytes.length(state), spec, 0, now, cost);
          assertThat(at).as("booking at +%d", now - T0).isEqualTo(earliest(history, spec, 0, checks, now, cost));
          if (at != CounterAlgorithm.NEVER) {
            state = SlidingLog.INSTANCE.book(state, spec, 0, now, at, cost);
            history.add(new long[] {at, cost});
          }
        }
        default -> { // a release of a live message, booked or not
          if (!history.isEmpty()) {
            long[] gone = history.remove((int) (step[3] % history.size()));
            state = SlidingLog.INSTANCE.release(state, spec, 0, now, gone[0], gone[1]);
          }
        }
      }
    }
  }

  /** The most cost a window (s - W, s] with s in [x, x + W) holds, by every s. */
  private static long fullest(List<long[]> history, long window, long x) {
    long most = 0;
    for (long s = x; s < x + window; s++) {
      most = Math.max(most, held(history, window, s));
    }
    return most;
  }

  private static long held(List<long[]> history, long window, long s) {
    long sum = 0;
    for (long[] e : history) {
      if (e[0] > s - window && e[0] <= s) {
        sum += e[1];
      }
    }
    return sum;
  }

  /** The first instant from x at which every enforced check in [from, to) admits a message of cost, by every instant. */
  private static long earliest(List<long[]> history, CounterSpec spec, int from, int to, long x, long cost) {
    long last = x;
    for (int c = from; c < to; c++) {
      if (cost > spec.bound(c) && (spec.refuses(c) || to - from == 1)) {
        return CounterAlgorithm.NEVER;
      }
    }
    for (long[] e : history) {
      last = Math.max(last, e[0] + spec.maxWindowMs());
    }
    for (long y = x; y <= last; y++) {
      boolean admits = true;
      for (int c = from; c < to && admits; c++) {
        if (to - from > 1 && !spec.refuses(c)) {
          continue; // a shadow check never holds a message back
        }
        admits = fullest(history, spec.windowMs(c), y) + cost <= spec.bound(c);
      }
      if (admits) {
        return y;
      }
    }
    throw new AssertionError("every window is empty by " + last);
  }

  @Provide
  Arbitrary<CounterSpec> specs() {
    Arbitrary<long[]> limits = Arbitraries.longs().between(1, 5).array(long[].class).ofMinSize(1).ofMaxSize(3);
    return limits.flatMap(l -> Arbitraries.longs().between(1, 40).array(long[].class).ofSize(l.length)
        .flatMap(w -> Arbitraries.of(true, false).array(boolean[].class).ofSize(l.length).map(enforced -> {
          enforced[0] = true;
          return new CounterSpec(Algorithm.SLIDING_LOG, l, w, enforced, 0);
        })));
  }

  /** {elapsed ms, cost, what (0 decide, 1 book, 2 release), which}. */
  @Provide
  Arbitrary<List<long[]>> steps() {
    return Combinators.combine(Arbitraries.longs().between(0, 12), Arbitraries.longs().between(1, 2),
        Arbitraries.longs().between(0, 2), Arbitraries.longs().between(0, 1000))
        .as((elapsed, cost, what, which) -> new long[] {elapsed, cost, what, which})
        .list().ofMinSize(1).ofMaxSize(40);
  }
}
