package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.oracle.OracleRun;
import dev.fcap.oracle.SuppressionChurn;
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
 * (real redis-server processes on loopback, started and stopped here). Clock steps back of up to
 * 3 s are in the traffic ({@code --no-clock-back} leaves them out; {@code --clock-back} is kept for
 * old command lines); {@code --streams N} runs N independent streams at once against the same
 * deployment (stream i takes the seeds firstSeed + i, + i + N, ...; its own key prefix per policy,
 * its own oracle), the decisions split between them: Redis answers one script call at a time, but
 * the round trips of N callers overlap, so 10^7 decisions on Redis take minutes, not an hour;
 * {@code --local-time} adds send windows and local-calendar caps to the random policies and a time
 * zone to the messages, with clock jumps to just before daylight-saving transitions;
 * {@code --older-releases} releases any recent decision, not only the newest (on by default; the flag is
 * kept for old command lines); {@code --first-seed N} starts at another policy and traffic seed (default 1), so runs
 * can be split. Suppression entries come and go through the store's own list (one change before one
 * decision in 40: {@code SuppressionChurn}, channel and category scopes, expiries; on Redis the
 * decision's script reads them), the oracle stating which decision is suppressed;
 * {@code --no-suppression} leaves them out. On Redis the traffic starts in 2037
 * ({@code SuppressionChurn.LATER_START}): Redis expires an entry by its own clock. Exit code 1 if
 * anything differed.
 */
public final class OracleVerify {
  private static final int STEPS_PER_POLICY = 20_000;

  private OracleVerify() {}

  public static void main(String[] args) throws Exception {
    long decisions = Long.parseLong(args[0]);
    Traffic.Options options = Traffic.Options.ALL;
    List<String> stores = new ArrayList<>();
    long firstSeed = 1;
    int streams = 1;
    boolean suppression = true;
    for (int i = 1; i < args.length; i++) {
      switch (args[i]) {
        case "--clock-back" -> options = options.withClockBack(true);
        case "--no-clock-back" -> options = options.withClockBack(false);
        case "--streams" -> streams = Integer.parseInt(args[++i]);
        case "--older-releases" -> options = options.withOlderReleases(true);
        case "--first-seed" -> firstSeed = Long.parseLong(args[++i]);
        case "--local-time" -> options = options.withZones(true);
        case "--no-suppression" -> suppression = false;
        default -> stores.add(args[i]);
      }
    }
    boolean failed = false;
    for (String store : stores) {
      long started = System.nanoTime();
      OracleRun.Report report = switch (store) {
        case "memory" -> streams(new Run(decisions, options, firstSeed, streams, suppression, ManualClock.START),
            clock -> MemoryStore.builder().clock(clock).segments(2).build(), null);
        case "standalone" -> onRedis(new Run(decisions, options, firstSeed, streams, suppression,
            SuppressionChurn.LATER_START), RedisDeployment.Kind.STANDALONE);
        case "cluster" -> onRedis(new Run(decisions, options, firstSeed, streams, suppression,
            SuppressionChurn.LATER_START), RedisDeployment.Kind.CLUSTER);
        default -> throw new IllegalArgumentException("unknown store " + store + "; use memory, standalone or cluster");
      };
      failed |= report.overAdmissions() > 0 || report.mismatches() > 0;
      System.out.printf("%-10s %s (%.0f s, %d stream%s)%n", store, report, (System.nanoTime() - started) / 1e9,
          streams, streams == 1 ? "" : "s");
    }
    System.exit(failed ? 1 : 0);
  }

  /** What to run: {@code start} is the traffic's first instant. */
  private record Run(long decisions, Traffic.Options options, long firstSeed, int streams, boolean suppression,
      long start) {}

  private static OracleRun.Report onRedis(Run run, RedisDeployment.Kind kind) throws Exception {
    try (RedisDeployment redis = RedisDeployment.start(kind)) {
      // generous timeouts: a long run shares the machine, and a timeout would end it, not judge it
      return streams(run, clock -> RedisStore.builder(redis.uri()).clock(clock)
          .connectTimeout(java.time.Duration.ofSeconds(60)).commandTimeout(java.time.Duration.ofSeconds(60))
          .keyPrefix("verify-" + System.nanoTime() + ":").build(), redis);
    }
  }

  /**
   * {@code streams} streams on threads of their own, {@code decisions / streams} each; on Redis they
   * meet every 10 policies so that one of them flushes what no stream reads again.
   */
  private static OracleRun.Report streams(Run run, java.util.function.Function<ManualClock, Store> stores,
      RedisDeployment redis) throws Exception {
    int streams = run.streams();
    java.util.concurrent.Phaser flush = new java.util.concurrent.Phaser(streams) {
      @Override
      protected boolean onAdvance(int phase, int parties) {
        if (redis != null) {
          try {
            redis.flushAll(); // earlier policies' keys are never read again
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }
        return parties == 0;
      }
    };
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(streams);
    try {
      List<java.util.concurrent.Future<OracleRun.Report>> runs = new ArrayList<>();
      for (int i = 0; i < streams; i++) {
        long share = run.decisions() / streams + (i < run.decisions() % streams ? 1 : 0);
        long first = run.firstSeed() + i;
        runs.add(pool.submit(() -> {
          try {
            return verify(share, run, first, stores, flush);
          } finally {
            flush.arriveAndDeregister();
          }
        }));
      }
      OracleRun.Report total = OracleRun.Report.EMPTY;
      for (java.util.concurrent.Future<OracleRun.Report> stream : runs) {
        total = total.plus(stream.get());
      }
      return total;
    } finally {
      pool.shutdownNow();
    }
  }

  private static OracleRun.Report verify(long decisions, Run run, long firstSeed,
      java.util.function.Function<ManualClock, Store> stores, java.util.concurrent.Phaser flush) throws Exception {
    Traffic.Options options = run.options();
    OracleRun.Report total = OracleRun.Report.EMPTY;
    int policies = 0;
    for (long seed = firstSeed; total.decisions() < decisions; seed += run.streams()) {
      if (++policies % 10 == 0) {
        flush.arriveAndAwaitAdvance();
      }
      // with --local-time, send windows and calendar caps in the policies and a time zone on the messages
      Traffic traffic = new Traffic(seed, Traffic.randomPolicy(seed, 12, false, options.zones()), options,
          run.start());
      long steps = Math.min(STEPS_PER_POLICY, (decisions - total.decisions()) * 100 / 85 + 1);
      long before = total.decisions();
      total = total.plus(OracleRun.run(traffic, policy -> {
        ManualClock clock = new ManualClock();
        return OracleRun.engine(Engine.builder(stores.apply(clock)).clock(clock).callerTime(true)
            .releaseHorizon(java.time.Duration.ofDays(7)).policy(policy).build()); // OracleRun releases up to 7 days back
      }, steps, run.suppression() ? new SuppressionChurn(seed, 40) : null));
      if (total.decisions() / 250_000 > before / 250_000) {
        System.err.printf("  ... stream from seed %d: %,d decisions: %d over-admissions, %d mismatches%n", firstSeed,
          total.decisions(),
            total.overAdmissions(), total.mismatches());
      }
    }
    return total;
  }
}
