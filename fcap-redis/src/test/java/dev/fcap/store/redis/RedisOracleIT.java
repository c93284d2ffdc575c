package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.oracle.OracleRun;
import dev.fcap.oracle.SuppressionChurn;
import dev.fcap.oracle.Traffic;
import dev.fcap.store.ManualClock;
import dev.fcap.store.redis.testing.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine on Redis (standalone and a 3-master cluster, real processes) against the
 * {@link dev.fcap.oracle.Oracle}: random policies of up to 12 rules and the adversarial traffic, every
 * decision and release compared, with suppression entries coming and going through the store's
 * list ({@link SuppressionChurn}; the decision's script reads them). (RedisDifferentialIT compares
 * Redis with MemoryStore byte for byte; this holds both to the model.) The traffic starts in 2037:
 * Redis expires an entry at its expiry by its own clock.
 */
class RedisOracleIT {
  static final int STEPS = Integer.getInteger("fcap.oracle.steps", 2000);

  @RegisterExtension
  static final RedisExtension STANDALONE = RedisExtension.standalone();

  @RegisterExtension
  static final RedisExtension CLUSTER = RedisExtension.cluster();

  @ParameterizedTest
  @ValueSource(longs = {11, 12, 13})
  void standaloneAgreesWithTheOracle(long seed) throws Exception {
    STANDALONE.deployment().flushAll();
    check(STANDALONE.uri(), seed);
  }

  @ParameterizedTest
  @ValueSource(longs = {14, 15})
  void clusterAgreesWithTheOracle(long seed) throws Exception {
    CLUSTER.deployment().flushAll();
    check(CLUSTER.uri(), seed);
  }

  @ParameterizedTest
  @ValueSource(longs = {16})
  void groupedAgreesWithTheOracle(long seed) throws Exception {
    STANDALONE.deployment().flushAll();
    check(STANDALONE.uri(), seed, 3);
  }

  private static void check(String uri, long seed) {
    check(uri, seed, 0);
  }

  private static void check(String uri, long seed, int groups) {
    Traffic traffic = new Traffic(seed, Traffic.randomPolicy(seed, 12, false), Traffic.Options.ALL,
        SuppressionChurn.LATER_START);
    OracleRun.Report report = OracleRun.run(traffic, policy -> {
      ManualClock clock = new ManualClock();
      return OracleRun.engine(Engine.builder(RedisStore.builder(uri).clock(clock).groups(groups).build())
          // the oracle releases recent decisions whatever their age: keep release records the longest
          .clock(clock).callerTime(true).releaseHorizon(java.time.Duration.ofDays(7)).policy(policy).build());
    }, STEPS, new SuppressionChurn(seed, 40));
    assertThat(report.overAdmissions()).as("seed %d: %s", seed, report).isZero();
    assertThat(report.mismatches()).as("seed %d: %s", seed, report).isZero();
    assertThat(report.admitted()).isPositive();
    assertThat(report.suppressed()).as("suppressed decisions").isPositive();
  }
}
