package dev.fcap.bench.redis;

import dev.fcap.engine.Engine;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.store.redis.testing.RedisServer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * RedisStoreBench's latency phase: the seed policy decided at a fixed rate from pacing threads, its
 * latency percentiles from each decision's scheduled start, and Redis's own EVALSHA histogram.
 */
final class LatencyPhase {
  private final RedisStoreBench bench;
  private final int recipients;
  private final int latencyThreads;
  private final boolean closedLoop;

  LatencyPhase(RedisStoreBench bench, int recipients, int latencyThreads, boolean closedLoop) {
    this.bench = bench;
    this.recipients = recipients;
    this.latencyThreads = latencyThreads;
    this.closedLoop = closedLoop;
  }

  /** A warm-up, then {@code measured} s at {@code rate}/s, printed; {@code rateSource} says where the rate came from. */
  void run(RedisServer server, double rate, String rateSource, int measured) throws Exception {
    latencyAtRate(rate, Math.min(3, measured)); // warm-up (JIT, connections), not counted
    if (server != null) {
      server.call("CONFIG", "RESETSTAT");
    }
    double[] latency = latencyAtRate(rate, measured);
    System.out.printf(Locale.ROOT, "%nfcap one decision at %.0f/s (%s; %s generator, %d pacing threads, latency from "
        + "each decision's scheduled start; %d decisions, %.2f%% started > 1 ms late, start lateness p99 %.3f ms, max "
        + "%.3f ms): p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms%n", rate,
        rateSource, closedLoop ? "closed-loop" : "open-loop",
        latencyThreads, (long) latency[4], latency[5] * 100, latency[6], latency[7], latency[0], latency[1], latency[2],
        latency[3]);
    if (server != null) {
      System.out.println("Redis-side EVALSHA execution time in that phase (LATENCY HISTOGRAM, power-of-two buckets): "
          + histogram(server.call("LATENCY", "HISTOGRAM", "evalsha")));
    }
  }

  /** The bucket bounds of p50, p99 and p99.9 in Redis's latency histogram reply for one command. */
  private static String histogram(Object reply) {
    List<?> command = (List<?>) ((List<?>) reply).get(1);
    long calls = 0;
    List<?> buckets = List.of();
    for (int i = 0; i + 1 < command.size(); i += 2) {
      if ("calls".equals(command.get(i))) {
        calls = (Long) command.get(i + 1);
      } else if ("histogram_usec".equals(command.get(i))) {
        buckets = (List<?>) command.get(i + 1);
      }
    }
    StringBuilder out = new StringBuilder(calls + " calls;");
    for (double q : new double[] {0.5, 0.99, 0.999}) {
      for (int i = 0; i + 1 < buckets.size(); i += 2) {
        if ((Long) buckets.get(i + 1) >= q * calls) {
          out.append(String.format(Locale.ROOT, " p%s <= %d us", q * 100 == Math.rint(q * 100)
              ? Integer.toString((int) (q * 100)) : Double.toString(q * 100), (Long) buckets.get(i)));
          break;
        }
      }
    }
    return out.toString();
  }


  /**
   * Decisions at {@code rate}/s in total for {@code duration} s from {@code latencyThreads} pacing
   * threads, each with its own schedule; latency is counted from each decision's scheduled instant,
   * so a generator that falls behind counts its backlog (no coordinated omission). Returns p50,
   * p99, p99.9, max (ms), the count, the fraction started more than 1 ms late, and the p99 and max of
   * that lateness (ms).
   *
   * <p>Open loop (the default): a pacing thread sends each decision at its instant and records its
   * latency when it completes, without waiting for it, as a platform's many request threads would.
   * Closed loop ({@code --generator closed}, the first version): each thread waits for its decision
   * before the next. That generator cannot keep up near its threads' own capacity: at half of the
   * 16-thread maximum with 8 threads, each thread must finish a decision every 1/2,000 s, which is
   * the time a decision takes at that maximum, so its backlog, not the store, made the tail.
   */
  private double[] latencyAtRate(double rate, int duration) throws Exception {
    try (RedisStore store = bench.store(recipients); Engine engine = bench.engine(store).policy(RedisStoreBench.seed()).build()) {
      long interval = (long) (1e9 * latencyThreads / rate);
      int perThread = (int) Math.min(1_000_000, (long) (rate * duration / latencyThreads));
      long[][] latencies = new long[latencyThreads][perThread];
      long[][] lateness = new long[latencyThreads][perThread];
      java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(latencyThreads * perThread);
      ExecutorService pool = Executors.newFixedThreadPool(latencyThreads);
      long start = System.nanoTime() + 50_000_000;
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < latencyThreads; t++) {
        int thread = t;
        futures.add(pool.submit(() -> {
          SplittableRandom random = new SplittableRandom(7 + thread);
          long offset = interval * thread / latencyThreads;
          for (int i = 0; i < perThread; i++) {
            long at = start + offset + i * interval;
            long wait;
            while ((wait = at - System.nanoTime()) > 0) {
              LockSupport.parkNanos(wait > 200_000 ? wait - 100_000 : Math.max(1, wait / 2));
            }
            lateness[thread][i] = -wait;
            int index = i;
            CompletableFuture<?> decided = engine.decide(bench.randomMessage(random)).whenComplete((d, e) -> {
              latencies[thread][index] = System.nanoTime() - at;
              done.countDown();
            });
            if (closedLoop) {
              decided.join();
            }
          }
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get(duration * 10L, TimeUnit.SECONDS);
      }
      if (!done.await(duration * 10L, TimeUnit.SECONDS)) {
        throw new IllegalStateException(done.getCount() + " decisions still pending");
      }
      pool.shutdown();
      long[] all = sorted(latencies);
      long[] late = sorted(lateness);
      int n = all.length;
      long lateOver1ms = Arrays.stream(late).filter(l -> l > 1_000_000).count();
      return new double[] {all[n / 2] / 1e6, all[(int) (n * 0.99)] / 1e6, all[(int) (n * 0.999)] / 1e6,
          all[n - 1] / 1e6, n, lateOver1ms / (double) n, late[(int) (n * 0.99)] / 1e6, late[n - 1] / 1e6};
    }
  }

  private static long[] sorted(long[][] perThread) {
    return Arrays.stream(perThread).flatMapToLong(Arrays::stream).sorted().toArray();
  }
}
