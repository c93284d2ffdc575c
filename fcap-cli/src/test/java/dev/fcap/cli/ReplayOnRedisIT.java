package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.redis.testing.RedisExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import dev.fcap.policy.PolicyParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A replay on Redis (rows' timestamps as the clock) writes the same decisions as on the embedded store. */
class ReplayOnRedisIT {
  @RegisterExtension static final RedisExtension REDIS = RedisExtension.standalone();
  @TempDir Path dir;

  private static void succeeds(String... args) {
    CliRun run = CliRun.fcap(args);
    assertThat(run.exit()).as(run.err()).isZero();
  }

  @Test
  void redisAndTheEmbeddedStoreWriteIdenticalDecisionFiles() throws Exception {
    Path log = dir.resolve("log.csv");
    succeeds("gen", "--rows", "20000", "--recipients", "300", "--templates", "20", "--rate", "200", "--out", log.toString());
    Path onMemory = dir.resolve("memory.txt");
    Path onRedis = dir.resolve("redis.txt");
    succeeds("replay", "--rules", "../examples/rules.yaml", "--log", log.toString(), "--decisions", onMemory.toString());
    succeeds("replay", "--rules", "../examples/rules.yaml", "--log", log.toString(), "--decisions", onRedis.toString(),
        "--store", REDIS.uri());
    assertThat(Files.readAllLines(onRedis)).hasSize(20_000).isEqualTo(Files.readAllLines(onMemory));
    assertThat(Files.readAllLines(onMemory)).as("the log exercises refusals").anyMatch(l -> l.startsWith("false"))
        .anyMatch(l -> l.contains("same-content")).anyMatch(l -> l.contains("recipient-per-minute"));
  }

  /** The adversarial log of {@link ReplayOracleTest} on Redis, one and two deciders, against the oracle. */
  @Test
  void oneAndTwoDecidersOnRedisWriteTheOraclesDecisions() throws Exception {
    Path log = ReplayOracleTest.adversarialLog(dir.resolve("log.csv"), 11, 12_000);
    List<String> expected = ReplayOracleTest.oracle(PolicyParser.parseFile(ReplayOracleTest.SEED), log);
    assertThat(expected).anyMatch(l -> l.equals("false,recipient-per-day"));
    for (boolean oneThread : new boolean[] {false, true}) {
      Path out = dir.resolve("redis-" + oneThread + ".txt");
      ReplayOracleTest.replay(oneThread, "--rules", ReplayOracleTest.SEED.toString(), "--log", log.toString(),
          "--decisions", out.toString(), "--store", REDIS.uri());
      assertThat(ReplayOracleTest.mismatches(ReplayOracleTest.normalized(Files.readAllLines(out)), expected))
          .as("one thread: %s", oneThread).isEmpty();
    }
  }

  @Test
  void anUnreachableOrMalformedStoreSaysWhatIsWrong() {
    CliRun run = CliRun.fcap("replay", "--rules", "../examples/rules.yaml", "--log", "x.csv", "--store", "mongodb://x");
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err()).contains("cannot use --store mongodb://x");
  }
}
