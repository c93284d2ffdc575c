package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.oracle.OracleRun;
import dev.fcap.oracle.Traffic;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.store.redis.testing.RedisDeployment;
import java.util.ArrayList;
import java.util.List;

/**
 * The long oracle run (docs/algorithms.md, "How it is tested"): {@code DECISIONS} decisions of the
 * adversarial traffic on random policies, a fresh policy, traffic seed and store every 20,000 steps,
 * each decision judged by the oracle; prints over-admissions and mismatches per store.
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.OracleVerify 10000000 memory standalone cluster
 * </pre>
 *
 * Stores: {@code memory} (the embedded store, two segments), {@code standalone} and {@code cluster}
 * (real redis-server processes on loopback, started and stopped here). Options: {@code --clock-back}
 * adds clock steps back of up to 3 s (still finds over-admissions: docs/algorithms.md);
 * {@code --older-releases} releases any recent decision, not only the newest (on by default since
 * issue 9's release fixes; kept for old command lines); {@code --first-seed N} starts at another policy and traffic seed (default 1), so runs
 * can be split. Exit code 1 if anything differed.
 */
public final class OracleVerify {
  private static final int STEPS_PER_POLICY = 20_000;

  private OracleVerify() {}

  public static void main(String[] args) throws Exception {
    long decisions = Long.parseLong(args[0]);
    Traffic.Options options = Traffic.Options.ALL.withClockBack(false);
    List<String> stores = new ArrayList<>();
    long firstSeed = 1;
    for (int i = 1; i < args.length; i++) {
      switch (args[i]) {
        case "--clock-back" -> options = options.withClockBack(true);
        case "--older-releases" -> options = options.withOlderReleases(true);
        case "--first-seed" -> firstSeed = Long.parseLong(args[++i]);
        default -> stores.add(args[i]);
      }
    }
    boolean failed = false;
    for (String store : stores) {
      long started = System.nanoTime();
      OracleRun.Report report = switch (store) {
        case "memory" -> verify(decisions, options, firstSeed,
            clock -> MemoryStore.builder().clock(clock).segments(2).build(), null);
        case "standalone" -> onRedis(decisions, options, firstSeed, RedisDeployment.Kind.STANDALONE);
        case "cluster" -> onRedis(decisions, options, firstSeed, RedisDeployment.Kind.CLUSTER);
        default -> throw new IllegalArgumentException("unknown store " + store + "; use memory, standalone or cluster");
      };
      failed |= report.overAdmissions() > 0 || report.mismatches() > 0;
      System.out.printf("%-10s %s (%.0f s)%n", store, report, (System.nanoTime() - started) / 1e9);
    }
    System.exit(failed ? 1 : 0);
  }

  private static OracleRun.Report onRedis(long decisions, Traffic.Options options, long firstSeed,
      RedisDeployment.Kind kind)
      throws Exception {
    try (RedisDeployment redis = RedisDeployment.start(kind)) {
      return verify(decisions, options, firstSeed, clock -> RedisStore.builder(redis.uri()).clock(clock)
          .keyPrefix("verify-" + System.nanoTime() + ":").build(), redis);
    }
  }

  private static OracleRun.Report verify(long decisions, Traffic.Options options, long firstSeed,
      java.util.function.Function<ManualClock, Store> stores, RedisDeployment redis) throws Exception {
    OracleRun.Report total = OracleRun.Report.EMPTY;
    for (long seed = firstSeed; total.decisions() < decisions; seed++) {
      if (redis != null && seed % 10 == 0) {
        redis.flushAll(); // earlier runs' keys are never read again
      }
      Traffic traffic = new Traffic(seed, Traffic.randomPolicy(seed, 12, false), options, ManualClock.START);
      long steps = Math.min(STEPS_PER_POLICY, (decisions - total.decisions()) * 100 / 85 + 1);
      long before = total.decisions();
      total = total.plus(OracleRun.run(traffic, policy -> {
        ManualClock clock = new ManualClock();
        return OracleRun.engine(Engine.builder(stores.apply(clock)).clock(clock).callerTime(true)
            .releaseHorizon(java.time.Duration.ofDays(7)).policy(policy).build()); // OracleRun releases up to 7 days back
      }, steps));
      if (total.decisions() / 1_000_000 > before / 1_000_000) {
        System.err.printf("  ... %,d decisions: %d over-admissions, %d mismatches%n", total.decisions(),
            total.overAdmissions(), total.mismatches());
      }
    }
    return total;
  }
}
