package dev.fcap.bench;

import dev.fcap.bench.redis.CommandStats;
import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Suppression;
import dev.fcap.store.ForwardingStore;
import dev.fcap.store.Store;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.memory.Durability;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Suppression lists at scale: an import of {@code --entries} rows (batches of 10,000, as the HTTP
 * import writes them) into a tenant's list, then {@code --decisions} decisions of the benchmark
 * workload (the seed policy; recipients none of which is suppressed) on a store holding that list,
 * beside the same decisions on a store without it: on the embedded store (durable, the list forced
 * to disk per batch; this thread's CPU per decision, the list beside an empty one) and on a
 * redis-server of its own (redis-server CPU per decision, pipelined by 100, the script reading the
 * entry beside the same store with the check off). On Redis it also times a count and a listing of
 * the imported list, each a walk of the tenant's buckets. Runs alternate, {@code --reps} each (on
 * Redis each starts from a restart on the snapshot of the list alone, every other pair with the list
 * read first); the medians and the median of the pairs' ratios are printed. Bounded in count; Redis
 * on loopback.
 *
 * <p>{@code --passes N} (Redis) measures the last of N passes of the decisions in each run, an hour
 * of the decisions' clock apart: the passes before create the recipients' partitions (and find them
 * unlisted), as a day's earlier decisions do, so the last pass is a recipient's later decisions of
 * the day; 1 (the default) measures every partition's first decision.
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.SuppressionBench [--entries 1000000] \
 *     [--decisions 1000000] [--reps 3] [--stores embedded,redis] [--passes 1]
 * </pre>
 */
public final class SuppressionBench {
  private static final int BATCH = 10_000;
  private static final long DAY_MS = Duration.ofDays(1).toMillis();
  private static final long HOUR_MS = Duration.ofHours(1).toMillis();
  private final int entries;
  private final int decisions;
  private final int reps;
  private final int passes;
  private final Message[] stream;

  private SuppressionBench(int entries, int decisions, int reps, int passes) {
    this.entries = entries;
    this.decisions = decisions;
    this.reps = reps;
    this.passes = passes;
    this.stream = Workload.messages(decisions);
  }

  public static void main(String[] args) throws Exception {
    int entries = 1_000_000;
    int decisions = 1_000_000;
    int reps = 3;
    int passes = 1;
    List<String> stores = List.of("embedded", "redis");
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--entries" -> entries = Integer.parseInt(args[i + 1]);
        case "--decisions" -> decisions = Integer.parseInt(args[i + 1]);
        case "--reps" -> reps = Integer.parseInt(args[i + 1]);
        case "--stores" -> stores = List.of(args[i + 1].split(","));
        case "--passes" -> passes = Integer.parseInt(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + " (--entries N, --decisions N, --reps N, --stores embedded,redis, --passes N)");
      }
    }
    if (passes < 1) {
      throw new IllegalArgumentException("--passes must be at least 1, got " + passes);
    }
    SuppressionBench bench = new SuppressionBench(entries, decisions, reps, passes);
    if (stores.contains("embedded")) {
      bench.embedded();
    }
    if (stores.contains("redis")) {
      bench.redis();
    }
  }

  /** Entry {@code i}: a recipient outside the workload's population, every channel and category. */
  private static Suppression entry(int i, long now) {
    return new Suppression("+1666" + String.format("%07d", i), List.of(), List.of(), "STOP", "import", now,
        Suppression.NEVER);
  }

  /** Imports the entries in batches; the wall time in seconds. */
  private double importInto(SuppressionList list, long now) {
    long start = System.nanoTime();
    List<Suppression> batch = new ArrayList<>(BATCH);
    for (int i = 0; i < entries; i++) {
      batch.add(entry(i, now));
      if (batch.size() == BATCH || i == entries - 1) {
        list.putAll(Message.DEFAULT_TENANT, batch);
        batch.clear();
      }
    }
    return (System.nanoTime() - start) / 1e9;
  }

  private void embedded() throws IOException {
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    AtomicLong now = new AtomicLong(System.currentTimeMillis());
    Path with = Files.createTempDirectory("fcap-suppress-with");
    Path without = Files.createTempDirectory("fcap-suppress-without");
    MemoryStore listed = MemoryStore.builder().clock(now::get).durable(Durability.of(with)).build();
    MemoryStore bare = MemoryStore.builder().clock(now::get).durable(Durability.of(without)).build();
    // each engine closes its store
    try (Engine a = engine(listed, now); Engine b = engine(bare, now)) {
      double seconds = importInto(listed.as(SuppressionList.class).orElseThrow(), now.get());
      System.out.printf("embedded: import of %,d rows in %.2f s (%,.0f rows/s), %,d bytes on disk%n", entries,
          seconds, entries / seconds, Files.size(with.resolve("suppressions.log")));
      double[] listedNs = new double[reps];
      double[] bareNs = new double[reps];
      for (int r = 0; r < reps; r++) {
        now.addAndGet(2 * DAY_MS); // every counter of the run before has expired: each run starts alike
        bareNs[r] = cpuPerDecision(b, threads);
        listedNs[r] = cpuPerDecision(a, threads);
      }
      report("embedded", "thread CPU per decision (ns)", listedNs, bareNs);
    } finally {
      deleteAll(with);
      deleteAll(without);
    }
  }

  private Engine engine(Store store, AtomicLong now) {
    return Engine.builder(store).clock(now::get).releaseHorizon(Duration.ZERO).policies(SeedPolicy.load()).build();
  }

  private double cpuPerDecision(Engine engine, com.sun.management.ThreadMXBean threads) {
    long cpu = threads.getCurrentThreadCpuTime();
    long refused = 0;
    for (Message m : stream) {
      Decision d = engine.decide(m).join();
      refused += d.suppressedReason() != null ? 1 : 0;
    }
    if (refused != 0) {
      throw new IllegalStateException(refused + " workload recipients were suppressed");
    }
    return (threads.getCurrentThreadCpuTime() - cpu) / (double) stream.length;
  }

  private void redis() throws Exception {
    AtomicLong now = new AtomicLong(System.currentTimeMillis());
    try (RedisDeployment deployment = RedisDeployment.standalone()) {
      // engine a closes it; a command may wait past the default second on a loaded machine, which
      // changes no CPU figure
      RedisStore store = RedisStore.builder(deployment.uri()).clock(now::get).commandTimeout(Duration.ofSeconds(10))
          .build();
      RedisServer server = deployment.masters().get(0);
      long memory = usedMemory(server);
      double seconds = importInto(store.as(SuppressionList.class).orElseThrow(), now.get());
      System.out.printf("redis: import of %,d rows in %.2f s (%,.0f rows/s), %.0f bytes of used_memory a row%n",
          entries, seconds, entries / seconds, (usedMemory(server) - memory) / (double) entries);
      walks(store.as(SuppressionList.class).orElseThrow());
      server.call("SAVE"); // each run starts from this snapshot (fromTheList)
      Store unchecked = new ForwardingStore(store) { // the same store, the entries never read
        @Override
        public <T> Optional<T> as(Class<T> type) {
          return type == SuppressionList.class ? Optional.empty() : super.as(type);
        }

        @Override
        public void close() {}
      };
      double[] checkedUs = new double[reps];
      double[] uncheckedUs = new double[reps];
      double[] checkedScriptUs = new double[reps];
      double[] uncheckedScriptUs = new double[reps];
      try (Engine a = engine(store, now); Engine b = engine(unchecked, now)) {
        for (int r = 0; r < reps; r++) { // in turn, each first in every other pair
          for (int run = 0; run < 2; run++) {
            boolean checked = (r + run) % 2 == 1;
            now.addAndGet(2 * DAY_MS);
            fromTheList(server, checked ? a : b);
            for (int pass = 1; pass < passes; pass++) { // a day's earlier decisions, not measured
              decideAll(checked ? a : b);
              now.addAndGet(HOUR_MS);
            }
            double[] us = redisPerDecision(checked ? a : b, server);
            (checked ? checkedUs : uncheckedUs)[r] = us[0];
            (checked ? checkedScriptUs : uncheckedScriptUs)[r] = us[1];
          }
        }
      }
      String measured = passes == 1 ? "" : " in the last of " + passes + " passes";
      report("redis", "redis-server CPU per decision (us)" + measured, checkedUs, uncheckedUs);
      report("redis", "time in the decision script per decision (us)" + measured, checkedScriptUs, uncheckedScriptUs);
    }
  }

  /** What listing and counting cost on the imported list: each walks the tenant's buckets. */
  private void walks(SuppressionList list) {
    for (int r = 0; r < 2; r++) {
      long start = System.nanoTime();
      long size = list.size(Message.DEFAULT_TENANT);
      double sizeMs = (System.nanoTime() - start) / 1e6;
      start = System.nanoTime();
      List<Suppression> first = list.page(Message.DEFAULT_TENANT, null, 1000);
      double pageMs = (System.nanoTime() - start) / 1e6;
      start = System.nanoTime();
      long listed = 0;
      for (List<Suppression> p = first; !p.isEmpty() && listed < 100_000; ) {
        listed += p.size();
        p = list.page(Message.DEFAULT_TENANT, p.get(p.size() - 1).recipient(), 1000);
      }
      double pagesMs = (System.nanoTime() - start) / 1e6;
      start = System.nanoTime();
      long emptySize = list.size("no-list");
      double emptyMs = (System.nanoTime() - start) / 1e6;
      System.out.printf("redis: size %,d in %.0f ms; first page of 1,000 in %.1f ms; %,d entries paged by 1,000 in "
          + "%.0f ms; an empty list: size %d in %.0f ms%n", size, sizeMs, pageMs, listed, pagesMs, emptySize, emptyMs);
    }
  }

  /** Decisions in a row that must pass after a restart before a run starts. */
  private static final int PROBES = 64;

  /**
   * Restarts the server from the snapshot taken after the import, so that each run starts from the
   * list alone in freshly loaded memory: with the partitions of the runs before deleted instead, a
   * run's Redis time per decision grew by about 1 us from one run to the next (a freed, scattered
   * heap), more than the difference measured. Then decisions through {@code engine} wait for its
   * reconnection: {@link #PROBES} in a row must pass, since the store's connections come back one by
   * one and a decision may take any of them.
   */
  private void fromTheList(RedisServer server, Engine engine) throws IOException {
    server.restart();
    Message probe = Message.builder("+1000000000000").content("probe").build();
    long deadline = System.nanoTime() + 30_000_000_000L;
    int passed = 0;
    while (true) { // a connection rejects commands until its reconnection (with backoff) is done
      try {
        passed = engine.decide(probe).join().degraded() ? 0 : passed + 1;
        if (passed == PROBES) {
          return;
        }
        continue;
      } catch (java.util.concurrent.CompletionException e) {
        passed = 0;
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the store did not come back after the restart", e);
        }
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  /**
   * redis-server CPU and time in scripts per decision (us): the CPU includes reading and answering
   * the calls, which moves with how full the client's pipeline runs; the script time
   * ({@code INFO commandstats}) is the decision's own work.
   */
  private double[] redisPerDecision(Engine engine, RedisServer server) throws IOException {
    double before = cpu(server);
    String stats = commandstats(server);
    long scriptBefore = CommandStats.scriptUsec(stats);
    long readsBefore = CommandStats.calls(stats, "hget");
    decideAll(engine);
    double cpu = (cpu(server) - before) * 1e6 / stream.length;
    stats = commandstats(server);
    System.out.printf("  %.3f bucket reads (HGET) per decision%n",
        (CommandStats.calls(stats, "hget") - readsBefore) / (double) stream.length);
    return new double[] {cpu, (CommandStats.scriptUsec(stats) - scriptBefore) / (double) stream.length};
  }

  /** Decides the stream, pipelined by 100; fails on a suppressed recipient or a degraded decision. */
  private void decideAll(Engine engine) {
    for (int i = 0; i < stream.length; i += 100) {
      List<CompletableFuture<Decision>> batch = engine.decideAll(Arrays.asList(stream).subList(i,
          Math.min(stream.length, i + 100)), false);
      for (CompletableFuture<Decision> f : batch) {
        Decision d = f.join();
        if (d.suppressedReason() != null || d.degraded()) {
          throw new IllegalStateException("a workload recipient was suppressed, or a decision degraded: " + d);
        }
      }
    }
  }

  private static String commandstats(RedisServer server) throws IOException {
    return (String) server.call("INFO", "commandstats");
  }

  /** The medians, and the median of the runs' ratios in turn (each pair ran side by side). */
  private void report(String store, String what, double[] with, double[] without) {
    double w = median(with);
    double wo = median(without);
    double[] ratios = new double[with.length];
    for (int i = 0; i < with.length; i++) {
      ratios[i] = without[i] / with[i];
    }
    System.out.printf("%s: %s, %,d entries listed: %s (median %.3f); none: %s (median %.3f); "
        + "throughput with / without: %.3fx (median of the pairs' %s: %.3fx)%n", store, what, entries,
        Arrays.toString(round(with)), w, Arrays.toString(round(without)), wo, wo / w, Arrays.toString(round(ratios)),
        median(ratios));
  }

  private static double[] round(double[] values) {
    double[] out = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = Math.round(values[i] * 1000) / 1000.0;
    }
    return out;
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  private static long usedMemory(RedisServer server) throws IOException {
    return Long.parseLong(server.info("memory", "used_memory").trim());
  }

  private static double cpu(RedisServer server) throws IOException {
    return Double.parseDouble(server.info("cpu", "used_cpu_user")) + Double.parseDouble(server.info("cpu", "used_cpu_sys"));
  }

  private static void deleteAll(Path dir) throws IOException {
    try (var files = Files.walk(dir)) {
      for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
