package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.redis.testing.RedisExtension;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The same random traffic, at the same caller-supplied times, into MemoryStore and RedisStore
 * (standalone and cluster) through the engine: every decision, release and inspection must agree.
 */
class RedisDifferentialIT {
  @RegisterExtension
  static final RedisExtension STANDALONE = RedisExtension.standalone();

  @RegisterExtension
  static final RedisExtension CLUSTER = RedisExtension.cluster();

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void standaloneAnswersExactlyLikeMemoryStore(long seed) throws Exception {
    STANDALONE.deployment().flushAll();
    var stats = DifferentialTraffic.run(clock -> RedisStore.builder(STANDALONE.uri()).clock(clock).build(), seed, 3000);
    assertExercised(stats);
    // both forms of a sliding log are in play (docs/redis.md): the gap form, and the canonical
    // layout for logs with costs above 1 or gaps of 2^30 ms or more; and the other algorithms
    // and large logs, a descriptor in the partition value and the entries in block keys
    Set<Integer> kinds = new TreeSet<>();
    StoredValue.all(STANDALONE.uri()).values().forEach(v -> v.counters().forEach(c -> kinds.add(c.kind())));
    // and message ids and release records: the first few in the value (kind 126), the rest in the
    // partition's entries hash (the value then marked, kind 121)
    assertThat(kinds).as("stored counter kinds").containsExactly(0, 1, 2, 3, StoredValue.GAPS, StoredValue.LARGE,
        StoredValue.SPILLED, StoredValue.ENTRY);
    // release records: byte for byte what the embedded store keeps
    java.util.Map<String, byte[]> stored = new java.util.HashMap<>();
    StoredValue.allEntries(STANDALONE.uri()).values().forEach(entries -> entries
        .forEach(e -> stored.put(java.util.HexFormat.of().formatHex(e.id()), e.state())));
    int compared = 0;
    for (var e : stats.releaseRecords().entrySet()) {
      byte[] state = stored.get(e.getKey());
      if (state != null) { // else released, or expired by a jump of the clock
        assertThat(state).as("release record %s", e.getKey()).isEqualTo(e.getValue());
        compared++;
      }
    }
    assertThat(compared).as("release records compared").isGreaterThan(100);
  }

  @ParameterizedTest
  @ValueSource(longs = {1})
  void clusterAnswersExactlyLikeMemoryStore(long seed) throws Exception {
    CLUSTER.deployment().flushAll();
    var stats = DifferentialTraffic.run(clock -> RedisStore.builder(CLUSTER.uri()).clock(clock).build(), seed, 3000);
    assertExercised(stats);
  }

  /**
   * The grouped layout (docs/redis.md, "Several partitions per key"), with a few groups so that each
   * holds many partitions (its listpack turning into a hash table on the way, its sweep deleting
   * nothing live): the same answers, and every partition a field, none a key of its own.
   */
  @ParameterizedTest
  @ValueSource(longs = {2})
  void groupedAnswersExactlyLikeMemoryStore(long seed) throws Exception {
    STANDALONE.deployment().flushAll();
    var stats = DifferentialTraffic.run(clock -> RedisStore.builder(STANDALONE.uri()).clock(clock).groups(5).build(),
        seed, 3000);
    assertExercised(stats);
    assertThat(StoredValue.keyKinds(STANDALONE.uri())).as("kinds of keys: groups, entries hashes, large logs' blocks, the marker")
        .containsExactlyInAnyOrder('G', 'M', 'L', 'X');
    Set<Integer> kinds = new TreeSet<>();
    StoredValue.all(STANDALONE.uri()).values().forEach(v -> v.counters().forEach(c -> kinds.add(c.kind())));
    assertThat(kinds).as("stored counter kinds").containsExactly(0, 1, 2, 3, StoredValue.GAPS, StoredValue.LARGE,
        StoredValue.SPILLED, StoredValue.ENTRY);
  }

  @ParameterizedTest
  @ValueSource(longs = {1})
  void groupedClusterAnswersExactlyLikeMemoryStore(long seed) throws Exception {
    CLUSTER.deployment().flushAll();
    var stats = DifferentialTraffic.run(clock -> RedisStore.builder(CLUSTER.uri()).clock(clock).groups(64).build(),
        seed, 3000);
    assertExercised(stats);
  }

  /** The traffic is only worth comparing if it admits and if every rule refuses some of it. */
  private static void assertExercised(DifferentialTraffic.Stats stats) {
    assertThat(stats.admitted()).isGreaterThan(100);
    assertThat(stats.refusalsByRule().keySet()).as("rules that refused something: %s", stats.refusalsByRule())
        .containsExactlyInAnyOrderElementsOf(
            DifferentialTraffic.POLICY.rules().stream().map(dev.fcap.model.Rule::id).toList());
  }
}
