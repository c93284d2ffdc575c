package dev.fcap.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * {@link LargeLog} gives {@link SlidingLog}'s answers and holds its entries, byte for byte, on random
 * specs (several checks, shadow checks, small limits so that every edge is reached often) and random
 * traffic: costs above 1, several messages in one millisecond, releases of earlier events, the clock
 * stepping back, idle gaps longer than every window. And both agree with a brute-force count.
 */
class LargeLogProperties {

  @Property(tries = 300)
  void aLargeLogAnswersAndHoldsExactlyWhatTheCompactLogDoes(@ForAll long seed) {
    Random random = new Random(seed);
    CounterSpec spec = randomSpec(random);
    LargeLog large = LargeLog.of(null);
    byte[] small = null;
    List<long[]> admitted = new ArrayList<>(); // time, cost: what the oracle counts
    long now = 1_800_000_000_000L;
    long written = now;
    int checks = spec.checks();
    for (int step = 0; step < 400; step++) {
      int move = random.nextInt(20);
      if (move == 0) {
        now -= random.nextInt(5_000); // the clock goes back
      } else if (move == 1) {
        now += 2 * spec.maxWindowMs() + random.nextInt(1000); // idle longer than every window
      } else if (move < 8) {
        now += 0; // same millisecond
      } else {
        now += random.nextInt((int) Math.min(Integer.MAX_VALUE, spec.maxWindowMs() / 4 + 1));
      }
      // a store never decides a partition before its latest write: a step back of the clock is decided
      // there, so neither log holds an entry after the decision's time (only a booking puts one there,
      // and only a compact log is booked into)
      now = Math.max(now, written);
      written = now;
      if (random.nextInt(12) == 0 && !admitted.isEmpty()) {
        long[] e = admitted.remove(random.nextInt(admitted.size()));
        if (large.entriesAfter(e[0], e[1]) <= LargeLog.MAX_RELEASE_MOVES) {
          small = SlidingLog.INSTANCE.release(small, spec, 0, now, e[0], e[1]);
        } // else a large log gives nothing back (LargeLog.MAX_RELEASE_MOVES)
        large.release(spec, now, e[0], e[1]);
        assertThat(large.encode()).as("step %d release", step).isEqualTo(small);
        continue;
      }
      long cost = random.nextInt(4) == 0 ? 1 + random.nextInt(4) : 1;
      long[] usedSmall = new long[checks];
      long[] retrySmall = new long[checks];
      long[] usedLarge = new long[checks];
      long[] retryLarge = new long[checks];
      boolean a = SlidingLog.INSTANCE.evaluate(small, spec, 0, now, cost, usedSmall, retrySmall, 0);
      boolean b = large.evaluate(spec, now, cost, usedLarge, retryLarge, 0);
      assertThat(b).as("step %d", step).isEqualTo(a);
      assertThat(usedLarge).as("step %d used", step).containsExactly(usedSmall);
      assertThat(retryLarge).as("step %d retry", step).containsExactly(retrySmall);
      if (a && random.nextInt(6) != 0) {
        small = SlidingLog.INSTANCE.record(small, spec, 0, now, cost);
        large.record(spec, now, cost);
        admitted.add(new long[] {now, cost});
        assertThat(large.encode()).as("step %d record", step).isEqualTo(small);
        assertThat(large.expiresAt(spec)).isEqualTo(SlidingLog.INSTANCE.expiresAt(small, spec, 0));
      }
    }
  }

  /** Without the clock going back, both count exactly what a brute-force oracle counts. */
  @Property(tries = 100)
  void aLargeLogCountsWhatTheOracleCounts(@ForAll long seed) {
    Random random = new Random(seed);
    CounterSpec spec = randomSpec(random);
    LargeLog large = LargeLog.of(null);
    List<long[]> admitted = new ArrayList<>();
    long now = 1_800_000_000_000L;
    for (int step = 0; step < 300; step++) {
      now += random.nextInt(3) == 0 ? 0 : random.nextInt((int) Math.min(Integer.MAX_VALUE, spec.maxWindowMs() / 3 + 1));
      long cost = 1 + (random.nextInt(3) == 0 ? random.nextInt(3) : 0);
      long[] used = new long[spec.checks()];
      long[] retry = new long[spec.checks()];
      boolean allowed = large.evaluate(spec, now, cost, used, retry, 0);
      boolean expected = true;
      for (int c = 0; c < spec.checks(); c++) {
        long sum = 0;
        for (long[] e : admitted) {
          if (e[0] > now - spec.windowMs(c)) {
            sum += e[1];
          }
        }
        if (spec.enforced(c) || sum <= spec.limit(c)) {
          assertThat(used[c]).as("step %d check %d", step, c).isEqualTo(sum);
        }
        if (sum + cost > spec.limit(c) && spec.enforced(c)) {
          expected = false;
        }
      }
      assertThat(allowed).as("step %d", step).isEqualTo(expected);
      if (allowed) {
        large.record(spec, now, cost);
        admitted.add(new long[] {now, cost});
      }
    }
  }

  static CounterSpec randomSpec(Random random) {
    int checks = 1 + random.nextInt(3);
    long[] limits = new long[checks];
    long[] windows = new long[checks];
    boolean[] enforced = new boolean[checks];
    for (int c = 0; c < checks; c++) {
      limits[c] = 1 + random.nextInt(random.nextBoolean() ? 5 : 40);
      windows[c] = 1 + random.nextInt(random.nextBoolean() ? 2_000 : 200_000);
      enforced[c] = random.nextInt(4) != 0;
    }
    return new CounterSpec(Algorithm.SLIDING_LOG, limits, windows, enforced, 0);
  }

  /** A release moves at most one block of entries: of a message with more after it, nothing comes back. */
  @net.jqwik.api.Example
  void aReleaseMovesAtMostOneBlockOfEntries() {
    CounterSpec spec = new CounterSpec(dev.fcap.model.Algorithm.SLIDING_LOG, new long[] {2000},
        new long[] {3_600_000}, new boolean[] {true}, 0);
    LargeLog log = LargeLog.of(null);
    long t0 = 1_800_000_000_000L;
    int n = LargeLog.MAX_RELEASE_MOVES + 10;
    for (int i = 0; i < n; i++) {
      log.record(spec, t0 + i, 1);
    }
    long[] used = new long[1];
    long[] retry = new long[1];
    log.release(spec, t0 + n, t0, 1); // n - 1 entries after it: stays counted
    log.evaluate(spec, t0 + n, 1, used, retry, 0);
    assertThat(used[0]).isEqualTo(n);
    long newest = t0 + n - 1 - LargeLog.MAX_RELEASE_MOVES; // exactly MAX_RELEASE_MOVES after it
    log.release(spec, t0 + n, newest, 1);
    log.evaluate(spec, t0 + n, 1, used, retry, 0);
    assertThat(used[0]).isEqualTo(n - 1);
  }
}
