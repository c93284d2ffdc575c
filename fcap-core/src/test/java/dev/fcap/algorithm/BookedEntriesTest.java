package dev.fcap.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The entries of a sliding log after an instant, oldest first, with their costs; none in an empty log. */
class BookedEntriesTest {
  private static final long T0 = 1_700_000_000_000L;

  @Test
  void theEntriesAfterAnInstantComeOldestFirstWithTheirCosts() {
    byte[] state = SlidingLog.encode(new long[] {T0 + 300, T0 + 200, T0 + 100, T0}, new long[] {3, 1, 2, 1}, 4);
    assertThat(BookedEntries.times(state, T0 + 100)).containsExactly(T0 + 200, T0 + 300);
    assertThat(BookedEntries.costs(state, T0 + 100)).containsExactly(1, 3);
    assertThat(BookedEntries.times(state, T0 - 1)).containsExactly(T0, T0 + 100, T0 + 200, T0 + 300);
    assertThat(BookedEntries.times(state, T0 + 300)).as("nothing after the newest").isEmpty();
  }

  @Test
  void anEmptyLogHoldsNothing() {
    assertThat(BookedEntries.times(null, T0)).isEmpty();
    assertThat(BookedEntries.times(new byte[0], T0)).isEmpty();
    assertThat(BookedEntries.costs(null, T0)).isEmpty();
  }

  @Test
  void aWideLogReadsTheSame() {
    long year = 365L * 24 * 3_600_000;
    byte[] state = SlidingLog.encode(new long[] {T0 + year, T0}, new long[] {1, 1}, 2);
    assertThat(BookedEntries.times(state, T0)).containsExactly(T0 + year);
  }
}
