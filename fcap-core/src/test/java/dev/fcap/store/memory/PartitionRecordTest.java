package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Varint;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The partition's time in a record, and records of layout 1 read back. */
class PartitionRecordTest {
  private static final long NOW = 1_800_000_000_123L;
  private static final CounterRequest LOG = new CounterRequest(new byte[] {1, 2, 3, 4, 5, 6, 7, 8},
      CounterSpec.single(Algorithm.SLIDING_LOG, 5, 86_400_000L, true, 0), 0);

  private static byte[] record() {
    byte[][] states = {dev.fcap.algorithm.CounterAlgorithm.of(Algorithm.SLIDING_LOG).record(null, LOG.spec(), 0, NOW, 1)};
    return PartitionRecord.write(null, "partition".getBytes(), List.of(LOG), states, NOW);
  }

  @Test
  void aRecordKeepsItsLatestWriteTimeInAFewBytes() {
    byte[] r = record();
    assertThat(PartitionRecord.latest(r)).isEqualTo(NOW);
    assertThat(PartitionRecord.live(r, NOW)).hasSize(1);
    // back from the expiry a day later: 4 bytes
    assertThat(PartitionRecord.expiresAt(r) - NOW).isBetween(86_400_000L, 86_401_000L);
  }

  @Test
  void nothingLiveLeftKeepsTheKeyAndTheTime() {
    byte[] r = PartitionRecord.write(record(), "partition".getBytes(), List.of(LOG), new byte[1][], NOW + 5);
    assertThat(PartitionRecord.isEmpty(r)).isTrue();
    assertThat(PartitionRecord.latest(r)).isEqualTo(NOW + 5);
    assertThat(PartitionRecord.keyEquals(r, "partition".getBytes())).isTrue();
  }

  @Test
  void aLayoutOneRecordReadsBackWithItsCountersAndNoTimeYet() {
    byte[] r = record();
    int keyEnd = 4 + 1 + "partition".length();
    int backSize = Varint.size(Varint.readLong(r, keyEnd));
    byte[] layout1 = new byte[r.length - backSize];
    System.arraycopy(r, 0, layout1, 0, keyEnd);
    System.arraycopy(r, keyEnd + backSize, layout1, keyEnd, r.length - keyEnd - backSize);
    byte[] converted = PartitionRecord.fromLayout1(layout1);
    assertThat(PartitionRecord.latest(converted)).as("no time yet: nothing is clamped").isZero();
    assertThat(PartitionRecord.expiresAt(converted)).isEqualTo(PartitionRecord.expiresAt(r));
    assertThat(PartitionRecord.live(converted, NOW)).hasSize(1);
    assertThat(PartitionRecord.live(converted, NOW).get(0).state())
        .isEqualTo(PartitionRecord.live(r, NOW).get(0).state());
    assertThat(Arrays.equals(PartitionRecord.key(converted), "partition".getBytes())).isTrue();
  }
}
