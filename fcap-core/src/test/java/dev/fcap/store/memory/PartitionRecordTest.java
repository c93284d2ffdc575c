package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.algorithm.CounterStates;
import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Varint;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The partition's time in a record, records of layout 1 read back, and the counter filter. */
class PartitionRecordTest {
  private static final long NOW = 1_800_000_000_123L;
  private static final CounterRequest LOG = new CounterRequest(new byte[] {1, 2, 3, 4, 5, 6, 7, 8},
      CounterSpec.single(Algorithm.SLIDING_LOG, 5, 86_400_000L, true, 0), 0);

  private static byte[] record() {
    CounterStates states = CounterStates.of(
        dev.fcap.algorithm.CounterAlgorithm.of(Algorithm.SLIDING_LOG).record(null, LOG.spec(), 0, NOW, 1));
    return PartitionRecord.write(null, request("partition".getBytes(), List.of(LOG)), states, NOW);
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
    byte[] r = PartitionRecord.write(record(), request("partition".getBytes(), List.of(LOG)), new CounterStates(1).reset(1), NOW + 5);
    assertThat(PartitionRecord.isEmpty(r)).isTrue();
    assertThat(PartitionRecord.latest(r)).isEqualTo(NOW + 5);
    assertThat(PartitionRecord.keyEquals(r, "partition".getBytes())).isTrue();
  }

  private static final Algorithm[] KINDS = {Algorithm.SLIDING_LOG, Algorithm.GCRA};

  /**
   * Random records, each written over the last with random counters (ids of 1 to 30 bytes, some
   * sharing their last eight bytes, windows that expire some), read with random lookups of held and
   * absent counters: {@code readStates} finds exactly the live counters a plain walk of the record
   * ({@code live}) lists, whether or not the record has a filter, for lookups of up to 70 counters.
   */
  @Test
  void theFilterNeverHidesACounterTheRecordHolds() {
    java.util.Random random = new java.util.Random(7);
    byte[][] ids = new byte[120][];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = new byte[1 + random.nextInt(30)];
      random.nextBytes(ids[i]);
      if (i % 7 == 1 && ids[i].length >= 8 && ids[i - 1].length >= 8) { // the same last eight bytes
        System.arraycopy(ids[i - 1], ids[i - 1].length - 8, ids[i], ids[i].length - 8, 8);
      }
    }
    int filtered = 0;
    int lookups = 0;
    for (int run = 0; run < 200; run++) {
      byte[] record = null;
      long now = NOW;
      for (int step = 0; step < 30; step++) {
        now += random.nextInt(40_000);
        List<CounterRequest> counters = randomCounters(random, ids, 1 + random.nextInt(8));
        CounterStates states = new CounterStates(1).reset(counters.size());
        if (record != null) {
          PartitionRecord.readStates(record, request(null, counters), now, states); // slices of the record
        }
        for (int i = 0; i < states.size(); i++) {
          // most steps record, a few leave a counter out: its state is written from its slice of the old record
          if (random.nextInt(10) > 0) {
            CounterRequest c = counters.get(i);
            states.set(i, dev.fcap.algorithm.CounterAlgorithm.of(c.spec().algorithm()).record(states.source(i),
                states.from(i), states.length(i), c.spec(), 0, now, 1));
          }
        }
        record = PartitionRecord.write(record, request("partition".getBytes(), counters), states, now);
        long at = now + random.nextInt(30_000);
        filtered += PartitionRecord.hasFilter(record) ? 1 : 0;
        for (int q = 0; q < 5; q++) {
          List<CounterRequest> lookup = randomCounters(random, ids, 1 + random.nextInt(q == 4 ? 70 : 6));
          assertThat(readStates(record, lookup, at)).as("run %d step %d lookup %d", run, step, q)
              .isEqualTo(walk(record, lookup, at));
          lookups++;
        }
      }
    }
    assertThat(filtered).as("records written with a filter").isGreaterThan(1_000);
    assertThat(lookups).isEqualTo(30_000);
  }

  @Test
  void aRecordWithManyCountersOpensWithAFilterThatRulesOutMostAbsentIds() {
    java.util.Random random = new java.util.Random(11);
    List<CounterRequest> held = new java.util.ArrayList<>();
    for (int i = 0; i < 50; i++) {
      byte[] id = new byte[24];
      random.nextBytes(id);
      held.add(new CounterRequest(id, CounterSpec.single(Algorithm.SLIDING_LOG, 5, 3_600_000L, true, 0), 0));
    }
    byte[][] states = new byte[held.size()][];
    for (int i = 0; i < states.length; i++) {
      states[i] = dev.fcap.algorithm.CounterAlgorithm.of(Algorithm.SLIDING_LOG).record(null, held.get(i).spec(), 0, NOW, 1);
    }
    byte[] record = PartitionRecord.write(null, request("partition".getBytes(), held), CounterStates.of(states), NOW);
    assertThat(PartitionRecord.hasFilter(record)).isTrue();
    assertThat(PartitionRecord.hasFilter(PartitionRecord.write(null, request("partition".getBytes(), held.subList(0, 3)),
        CounterStates.of(java.util.Arrays.copyOf(states, 3)), NOW))).as("three counters: no filter").isFalse();
    int bits = CounterFilter.bits(held.size());
    byte[] filter = new byte[bits / 8];
    for (CounterRequest c : held) {
      CounterFilter.add(filter, 0, bits, c.key(), 0, c.key().length);
    }
    int maybe = 0;
    for (int i = 0; i < 100_000; i++) {
      byte[] absent = new byte[24];
      random.nextBytes(absent);
      maybe += CounterFilter.mightHold(filter, 0, bits, absent, 0, absent.length) ? 1 : 0;
    }
    assertThat(maybe).as("false positives in 100,000 (about 3 %% expected)").isBetween(1_000, 6_000);
    for (CounterRequest c : held) {
      assertThat(CounterFilter.mightHold(filter, 0, bits, c.key(), 0, c.key().length)).isTrue();
    }
  }

  /** {@code counters} as the request form the record code reads. */
  static dev.fcap.store.internal.ReusableRequest request(byte[] partition, List<CounterRequest> counters) {
    return new dev.fcap.store.internal.ReusableRequest().set(
        dev.fcap.store.PartitionRequest.of(partition, dev.fcap.store.Operation.DECIDE, NOW, 1, counters));
  }

  private static List<CounterRequest> randomCounters(java.util.Random random, byte[][] ids, int n) {
    List<CounterRequest> counters = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      long window = 10_000L * (1 + random.nextInt(12));
      counters.add(new CounterRequest(ids[random.nextInt(ids.length)],
          CounterSpec.single(KINDS[random.nextInt(KINDS.length)], 3, window, true, 0), 0));
    }
    return counters;
  }

  private static List<String> readStates(byte[] record, List<CounterRequest> counters, long now) {
    CounterStates states = new CounterStates(1).reset(counters.size());
    PartitionRecord.readStates(record, request(null, counters), now, states);
    List<String> out = new java.util.ArrayList<>();
    for (int i = 0; i < states.size(); i++) {
      byte[] s = states.get(i);
      out.add(s == null ? "-" : java.util.HexFormat.of().formatHex(s));
    }
    return out;
  }

  /** The oracle: each counter's state as a plain walk of every live entry finds it. */
  private static List<String> walk(byte[] record, List<CounterRequest> counters, long now) {
    List<String> out = new java.util.ArrayList<>();
    for (CounterRequest c : counters) {
      String state = "-";
      for (dev.fcap.store.StoredCounter s : PartitionRecord.live(record, now)) {
        if (Arrays.equals(s.key(), c.key()) && s.algorithm() == c.spec().algorithm()) {
          state = java.util.HexFormat.of().formatHex(s.state());
          break;
        }
      }
      out.add(state);
    }
    return out;
  }
}
