package dev.fcap.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.store.ManualClock;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Time traces of a {@link SlewingClock} on a manual wall clock and a manual monotonic clock: steps
 * forward and back, large and small, the rate of convergence, never backwards, steps reported once.
 */
class SlewingClockTest {
  private static final long START = ManualClock.START;
  private final ManualClock wall = new ManualClock();
  private final AtomicLong monotonic = new AtomicLong(123_456_789L);
  private final List<long[]> reported = new ArrayList<>();
  private final SlewingClock clock = SlewingClock.following(wall, monotonic::get,
      (step, offset) -> reported.add(new long[] {step, offset}));

  /** Real time passes: both clocks move together. */
  private void pass(long ms) {
    wall.advance(ms);
    monotonic.addAndGet(ms * 1_000_000);
  }

  @Test
  void withoutStepsItIsTheWallClock() {
    assertThat(clock.millis()).isEqualTo(START);
    for (int i = 0; i < 1000; i++) {
      pass(i % 7);
      assertThat(clock.millis()).isEqualTo(wall.millis());
    }
    assertThat(clock.steps()).isZero();
    assertThat(reported).isEmpty();
  }

  @Test
  void aForwardStepIsAbsorbedAtTenPercentOfRealTime() {
    clock.millis();
    wall.advanceSeconds(61);
    pass(1_000);
    // a second later: one second and a tenth, not 62 s
    assertThat(clock.millis()).isEqualTo(START + 1_100);
    assertThat(clock.offsetMillis()).isEqualTo(61_000 - 100);
    assertThat(clock.steps()).isEqualTo(1);
    assertThat(reported).hasSize(1);
    assertThat(reported.get(0)).containsExactly(61_000, 60_900);
    // 61 s at 10 %: 610 s of real time, during which this clock runs 10 % fast
    pass(300_000);
    assertThat(clock.millis()).isEqualTo(START + 1_100 + 330_000);
    pass(309_000);
    assertThat(clock.millis()).isEqualTo(wall.millis());
    pass(5_000);
    assertThat(clock.millis()).isEqualTo(wall.millis());
    assertThat(reported).as("reported once").hasSize(1);
  }

  @Test
  void aBackwardStepSlowsTheClockButNeverTurnsItBack() {
    pass(10_000);
    long before = clock.millis();
    wall.advanceSeconds(-30);
    assertThat(clock.millis()).as("no real time passed: no time passes").isEqualTo(before);
    pass(1_000);
    assertThat(clock.millis()).isEqualTo(before + 900);
    assertThat(reported).hasSize(1);
    assertThat(reported.get(0)[0]).isEqualTo(-30_000);
    pass(299_000); // 30 s at 10 %: 300 s
    assertThat(clock.millis()).isEqualTo(wall.millis());
  }

  @Test
  void aStepAtTheThresholdIsAbsorbedButNotReported() {
    clock.millis();
    wall.advance(SlewingClock.STEP_THRESHOLD_MS);
    pass(100);
    assertThat(clock.millis()).isEqualTo(START + 110);
    assertThat(clock.steps()).isZero();
    wall.advance(SlewingClock.STEP_THRESHOLD_MS + 1);
    clock.millis();
    assertThat(clock.steps()).as("a change of the offset beyond the threshold").isEqualTo(1);
  }

  @Test
  void aLargeStepIsSlewedToo() {
    clock.millis();
    wall.advanceSeconds(24 * 3600);
    pass(60_000);
    assertThat(clock.millis()).isEqualTo(START + 66_000);
    assertThat(reported.get(0)[0]).isEqualTo(24 * 3600 * 1000L);
    assertThat(clock.offsetMillis()).isEqualTo(24 * 3600 * 1000L - 6_000);
  }

  @Test
  void stepsBackAndForthAreEachReportedAndTheOffsetIsTheirSum() {
    clock.millis();
    wall.advanceSeconds(20);
    clock.millis();
    wall.advanceSeconds(-50);
    clock.millis();
    assertThat(reported).hasSize(2);
    assertThat(reported.get(1)).containsExactly(-50_000, -30_000);
    assertThat(clock.millis()).isEqualTo(START);
    pass(300_000);
    assertThat(clock.millis()).isEqualTo(wall.millis());
  }

  @Test
  void neverBackwardsAndNeverFurtherFromTheWallThanTheStepsNotYetAbsorbed() {
    Random random = new Random(35);
    long last = clock.millis();
    for (int i = 0; i < 20_000; i++) {
      int what = random.nextInt(100);
      if (what < 2) {
        wall.advance(random.nextInt(240_000) - 120_000);
      } else if (what < 4) {
        monotonic.addAndGet(random.nextInt(5_000_000)); // time the wall clock did not see (a pause)
      } else {
        pass(random.nextInt(2_000));
      }
      long now = clock.millis();
      assertThat(now).as("reading %d", i).isGreaterThanOrEqualTo(last);
      last = now;
      assertThat(Math.abs(wall.millis() - now)).isLessThanOrEqualTo(Math.abs(clock.offsetMillis()) + 1);
    }
    pass(10_000_000);
    assertThat(clock.millis()).as("converged").isEqualTo(wall.millis());
  }

  @Test
  void aMonotonicClockGoingBackCountsAsNoTimePassing() {
    pass(1_000);
    long before = clock.millis();
    monotonic.addAndGet(-5_000_000_000L);
    assertThat(clock.millis()).isEqualTo(before);
    pass(1_000);
    assertThat(clock.millis()).isEqualTo(before + 1_000);
  }

  @Test
  void refusesARateThatIsNotAShare() {
    assertThatThrownBy(() -> new SlewingClock(wall, monotonic::get, 1.0, 1_000, (s, o) -> { }))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rate");
  }
}
