package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.redis.testing.RedisExtension;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Lua fast path and general path on the same inputs: the same random traffic, at the same
 * caller-supplied times, through the script as it runs and through the same script with its fast
 * path switched off ({@link PartitionScript#withoutFastPath}). Each run must answer exactly like
 * MemoryStore ({@link DifferentialTraffic}), and the two must leave the same counters in Redis, byte
 * for byte: the fast path is only a faster way to the general path's result.
 */
class PartitionScriptPathsIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  @ParameterizedTest
  @ValueSource(longs = {11, 12})
  void theFastPathAndTheGeneralPathLeaveTheSameCounters(long seed) throws Exception {
    Map<String, List<String>> fast = countersAfter(seed, PartitionScript.assembled());
    Map<String, List<String>> general = countersAfter(seed, PartitionScript.withoutFastPath());
    assertThat(fast).as("partitions written").hasSizeGreaterThan(50);
    assertThat(general).isEqualTo(fast);
  }

  @Test
  void theScriptIsAssembledFromEveryListedFileOnceAndTheSwitchIsThere() {
    String script = new String(PartitionScript.assembled(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(PartitionScript.files()).doesNotHaveDuplicates().contains("FastPath.lua", "PartitionStep.lua");
    assertThat(script).startsWith("-- fcap partition script").containsOnlyOnce(PartitionScript.FAST_PATH_SWITCH);
    assertThat(new String(PartitionScript.withoutFastPath(), java.nio.charset.StandardCharsets.UTF_8))
        .doesNotContain(PartitionScript.FAST_PATH_SWITCH).hasSameSizeAs(script.replace(
            PartitionScript.FAST_PATH_SWITCH, "local fast = false"));
  }

  /**
   * The counters every partition holds after the traffic, rendered (kind, id, expiry, state); the
   * remembered decisions and the incarnation are left out: their keys are random per run.
   */
  private static Map<String, List<String>> countersAfter(long seed, byte[] script) throws Exception {
    REDIS.deployment().flushAll();
    Function<dev.fcap.store.ManualClock, dev.fcap.store.Store> store =
        clock -> RedisStore.builder(REDIS.uri()).clock(clock).script(script).build();
    DifferentialTraffic.run(store, seed, 2000);
    Map<String, List<String>> counters = new TreeMap<>();
    HexFormat hex = HexFormat.of();
    StoredValue.all(REDIS.uri()).forEach((name, value) -> counters.put(hex.formatHex(
        name.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1)), value.counters().stream()
        .filter(c -> c.kind() != StoredValue.ENTRY && c.kind() != StoredValue.SPILLED && c.kind() != INCARNATION)
        .map(c -> c.kind() + ":" + hex.formatHex(c.id()) + ":" + c.expires() + ":" + hex.formatHex(c.state()))
        .toList()));
    return counters;
  }

  /** The kind of the partition's incarnation entry (RedisRequests.lua, "stored as nothing"). */
  private static final int INCARNATION = 125;
}
