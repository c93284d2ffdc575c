package dev.fcap.bench.redis;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.store.SeedRules;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

/**
 * fcap's RedisStore against the published sorted-set design and against the physical limit (a
 * trivial EVALSHA returning 1), on one redis-server this benchmark starts on loopback (or
 * {@code --uri}). Throughput phases run a bounded time each, repeated; medians are reported.
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.redis.RedisStoreBench \
 *     [--seconds 5] [--reps 3] [--threads 16] [--batch 100] [--recipients 1000000] \
 *     [--worst 10000] [--typical 20000] [--uri redis://127.0.0.1:6379] [--redis-cpus 1] [--latency-threads 8]
 *     [--latency-rate R (default: half of fcap's unpipelined max)] [--generator open|closed]
 *     [--latency-seconds N (default: --seconds, at least 10)]
 *     [--phases throughput,latency,memory] [--release-records on|off (default on)]
 *     [--per-group K (default 0: a key per recipient; else the grouped layout, a phase's recipients / K groups)]
 * </pre>
 *
 * <p>{@code --redis-cpus} pins the redis-server this benchmark starts to those CPUs ({@code taskset});
 * run the JVM itself under {@code taskset -c} on the other CPUs so that the load generator never
 * takes Redis's core.
 *
 * Modes: "unpipelined" = every caller thread waits for each decision before the next (auto-flush
 * on; the threads share one connection per client); "pipelined" = batches of {@code --batch}
 * decisions issued together and flushed once (fcap: {@code Engine.decideAll} -> {@code applyAll};
 * baseline: 4 calls per decision issued without waiting).
 */
public final class RedisStoreBench {
  private static final Policy SEED = SeedRules.POLICY;
  private static final Policy RECIPIENT_RULES = SeedRules.RECIPIENT_RULES;

  /** The seed policy (examples/rules.yaml) the benchmarks decide. */
  static Policy seed() {
    return SEED;
  }

  private int seconds = 5;
  private int reps = 3;
  private int threads = 16;
  private int batch = 100;
  private int recipients = 1_000_000;
  private int worst = 10_000;
  private int typical = 20_000;
  private String uri;
  private String redisCpus;
  private int latencyThreads = 8;
  private double latencyRate;
  /** The latency phase's measured time; 0: {@code seconds}, at least 10 (enough decisions for a p99.9). */
  private int latencySeconds;
  private boolean closedLoop;
  /** Memory phase: whether the engine keeps a release record per admitted decision (its default). */
  private boolean releaseRecords = true;
  private String phases = "throughput,latency,memory";
  /** Recipients per group of the grouped layout (docs/redis.md, "Several partitions per key"); 0: a key each. */
  private int perGroup;

  public static void main(String[] args) throws Exception {
    RedisStoreBench b = new RedisStoreBench();
    for (int i = 0; i < args.length; i += 2) {
      String v = args[i + 1];
      switch (args[i]) {
        case "--seconds" -> b.seconds = Integer.parseInt(v);
        case "--reps" -> b.reps = Integer.parseInt(v);
        case "--threads" -> b.threads = Integer.parseInt(v);
        case "--batch" -> b.batch = Integer.parseInt(v);
        case "--recipients" -> b.recipients = Integer.parseInt(v);
        case "--worst" -> b.worst = Integer.parseInt(v);
        case "--typical" -> b.typical = Integer.parseInt(v);
        case "--uri" -> b.uri = v;
        case "--redis-cpus" -> b.redisCpus = v;
        case "--latency-threads" -> b.latencyThreads = Integer.parseInt(v);
        case "--latency-rate" -> b.latencyRate = Double.parseDouble(v);
        case "--latency-seconds" -> b.latencySeconds = Integer.parseInt(v);
        case "--generator" -> b.closedLoop = switch (v) {
          case "open" -> false;
          case "closed" -> true;
          default -> throw new IllegalArgumentException("--generator is open or closed, not " + v);
        };
        case "--release-records" -> b.releaseRecords = switch (v) {
          case "on" -> true;
          case "off" -> false;
          default -> throw new IllegalArgumentException("--release-records is on or off, not " + v);
        };
        case "--phases" -> b.phases = v;
        case "--per-group" -> b.perGroup = Integer.parseInt(v);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (b.uri != null) {
      b.run(null);
    } else {
      try (RedisDeployment redis = RedisDeployment.standalone()) {
        b.uri = redis.uri();
        if (b.redisCpus != null) {
          String pid = redis.servers().get(0).info("server", "process_id").trim();
          Process taskset = new ProcessBuilder("taskset", "-a", "-p", "-c", b.redisCpus, pid).inheritIO().start();
          if (taskset.waitFor() != 0) {
            throw new IllegalStateException("taskset failed for redis-server " + pid);
          }
        }
        b.run(redis.servers().get(0));
      }
    }
  }

  private void run(RedisServer redisServer) throws Exception {
    this.server = redisServer;
    System.out.printf(Locale.ROOT, "redis %s, %d s x %d reps, %d threads, batch %d, %,d recipients, phases %s, %s%n", uri,
        seconds, reps, threads, batch, recipients, phases,
        perGroup == 0 ? "a key per recipient" : "groups of " + perGroup + " recipients");
    if (perGroup > 0 && server != null) {
      // the grouped layout's saving needs its groups to stay listpacks (docs/redis.md)
      server.call("CONFIG", "SET", "hash-max-listpack-value", "512");
    }
    double fcapUnpiped = Double.NaN;
    if (phases.contains("throughput")) {
      fcapUnpiped = throughput();
    }
    if (phases.contains("latency")) {
      double rate = latencyRate > 0 ? latencyRate : fcapUnpiped / 2;
      flush(server);
      int measured = latencySeconds > 0 ? latencySeconds : Math.max(10, seconds);
      latencyAtRate(rate, Math.min(3, measured)); // warm-up (JIT, connections), not counted
      if (server != null) {
        server.call("CONFIG", "RESETSTAT");
      }
      double[] latency = latencyAtRate(rate, measured);
      System.out.printf(Locale.ROOT, "%nfcap one decision at %.0f/s (%s; %s generator, %d pacing threads, latency from "
          + "each decision's scheduled start; %d decisions, %.2f%% started > 1 ms late, start lateness p99 %.3f ms, max "
          + "%.3f ms): p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms%n", rate,
          latencyRate > 0 ? "--latency-rate" : "half the unpipelined max", closedLoop ? "closed-loop" : "open-loop",
          latencyThreads, (long) latency[4], latency[5] * 100, latency[6], latency[7], latency[0], latency[1], latency[2],
          latency[3]);
      if (server != null) {
        System.out.println("Redis-side EVALSHA execution time in that phase (LATENCY HISTOGRAM, power-of-two buckets): "
            + histogram(server.call("LATENCY", "HISTOGRAM", "evalsha")));
      }
    }
    if (phases.contains("memory") && server != null) {
      memory(server);
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

  /** The throughput tables; returns fcap's unpipelined decisions/s. */
  private double throughput() throws Exception {
    double trivialUnpiped = median("trivial-unpipelined", () -> trivial(false));
    double trivialPiped = median("trivial-pipelined", () -> trivial(true));
    flush(server);
    double fcapUnpiped = median("fcap-unpipelined", () -> fcap(false));
    double fcapPiped = median("fcap-pipelined", () -> fcap(true));
    flush(server);
    double baseUnpiped = median("baseline-unpipelined", () -> baseline(false));
    double basePiped = median("baseline-pipelined", () -> baseline(true));
    System.out.println();
    System.out.println("| measure (decisions/s, median of " + reps + ") | unpipelined | pipelined |");
    System.out.println("| --- | ---: | ---: |");
    row("trivial EVALSHA returning 1 (calls/s)", trivialUnpiped, trivialPiped);
    row("fcap RedisStore, seed policy (1 EVALSHA)", fcapUnpiped, fcapPiped);
    row("sorted-set baseline, seed policy (4 EVALSHA)", baseUnpiped, basePiped);
    System.out.printf(Locale.ROOT, "| fcap / baseline | %.2fx | %.2fx |%n", fcapUnpiped / baseUnpiped, fcapPiped / basePiped);
    System.out.printf(Locale.ROOT, "| fcap / trivial EVALSHA | %.2f | %.2f |%n", fcapUnpiped / trivialUnpiped,
        fcapPiped / trivialPiped);
    var c = cpuPerDecision;
    System.out.println();
    System.out.println("| same Redis core: decisions per second of redis-server CPU (median) | unpipelined | pipelined |");
    System.out.println("| --- | ---: | ---: |");
    row("trivial EVALSHA returning 1 (calls)", c.get("trivial-unpipelined"), c.get("trivial-pipelined"));
    row("fcap RedisStore, seed policy", c.get("fcap-unpipelined"), c.get("fcap-pipelined"));
    row("sorted-set baseline, seed policy", c.get("baseline-unpipelined"), c.get("baseline-pipelined"));
    System.out.printf(Locale.ROOT, "| fcap / baseline | %.2fx | %.2fx |%n", c.get("fcap-unpipelined") / c.get("baseline-unpipelined"),
        c.get("fcap-pipelined") / c.get("baseline-pipelined"));
    System.out.printf(Locale.ROOT, "| fcap / trivial EVALSHA | %.2f | %.2f |%n", c.get("fcap-unpipelined") / c.get("trivial-unpipelined"),
        c.get("fcap-pipelined") / c.get("trivial-pipelined"));
    flush(server);
    return fcapUnpiped;
  }

  private static void row(String name, double unpiped, double piped) {
    System.out.printf(Locale.ROOT, "| %s | %,.0f | %,.0f |%n", name, unpiped, piped);
  }

  private static void flush(RedisServer server) throws Exception {
    if (server != null) {
      server.call("FLUSHALL");
    }
  }

  @FunctionalInterface
  private interface Measure {
    double run() throws Exception;
  }

  private RedisServer server;
  private final List<String> cpu = new ArrayList<>();

  /** Median of {@code reps} runs; also records decisions per second of redis-server CPU (user + sys). */
  private double median(String name, Measure m) throws Exception {
    m.run(); // warm-up, not counted
    double[] r = new double[reps];
    double[] perCpu = new double[reps];
    for (int i = 0; i < reps; i++) {
      double cpuBefore = redisCpu();
      long start = System.nanoTime();
      r[i] = m.run();
      double elapsed = (System.nanoTime() - start) / 1e9;
      double used = redisCpu() - cpuBefore;
      perCpu[i] = used > 0 ? r[i] * elapsed / used : Double.NaN;
    }
    Arrays.sort(r);
    Arrays.sort(perCpu);
    cpuPerDecision.put(name, perCpu[reps / 2]);
    return r[reps / 2];
  }

  private final java.util.Map<String, Double> cpuPerDecision = new java.util.LinkedHashMap<>();

  private double redisCpu() throws Exception {
    if (server == null) {
      return Double.NaN;
    }
    return Double.parseDouble(server.info("cpu", "used_cpu_user")) + Double.parseDouble(server.info("cpu", "used_cpu_sys"));
  }

  /**
   * Runs {@code threads} callers for {@code seconds}; each call of {@code unit} does some decisions
   * synchronously and returns how many. Bounded by time (and 10^8 units).
   */
  private double loop(IntFunction<Integer> unit) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    AtomicLong done = new AtomicLong();
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(seconds);
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      futures.add(pool.submit(() -> {
        for (int i = 0; i < 100_000_000 && System.nanoTime() < end; i++) {
          done.addAndGet(unit.apply(thread));
        }
        return null;
      }));
    }
    for (Future<?> f : futures) {
      f.get();
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    pool.shutdown();
    return done.get() / elapsed;
  }

  private double trivial(boolean pipelined) throws Exception {
    RedisClient client = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<String, String> c = client.connect(StringCodec.UTF8)) {
      String sha = c.sync().scriptLoad("return 1");
      RedisAsyncCommands<String, String> async = c.async();
      String[] keys = {"trivial"};
      if (!pipelined) {
        return loop(t -> {
          async.evalsha(sha, ScriptOutputType.INTEGER, keys).toCompletableFuture().join();
          return 1;
        });
      }
      c.setAutoFlushCommands(false);
      Object lock = new Object();
      return loop(t -> {
        List<CompletableFuture<Object>> calls = new ArrayList<>(batch);
        synchronized (lock) {
          for (int i = 0; i < batch; i++) {
            calls.add(async.evalsha(sha, ScriptOutputType.INTEGER, keys).toCompletableFuture());
          }
          c.flushCommands();
        }
        calls.forEach(CompletableFuture::join);
        return batch;
      });
    } finally {
      client.shutdown();
    }
  }

  /** fcap's store on the benchmark's Redis: a key per recipient, or {@code population / perGroup} groups. */
  private RedisStore store(int population) {
    return RedisStore.builder(uri).groups(perGroup == 0 ? 0 : Math.max(1, population / perGroup)).build();
  }

  /** An engine on {@code store}, with releases by decision id on (the default) or off ({@code --release-records}). */
  private Engine.Builder engine(RedisStore store) {
    return releaseRecords ? Engine.builder(store) : Engine.builder(store).releaseHorizon(Duration.ZERO);
  }

  private Message randomMessage(SplittableRandom random) {
    return Message.builder("+1" + (5_550_000_000L + random.nextInt(recipients)))
        .content("template " + random.nextInt(20) + ": your code is ready").build();
  }

  private double fcap(boolean pipelined) throws Exception {
    try (RedisStore store = store(recipients); Engine engine = engine(store).policy(SEED).build()) {
      SplittableRandom[] randoms = randoms();
      if (!pipelined) {
        return loop(t -> {
          engine.decide(randomMessage(randoms[t])).join();
          return 1;
        });
      }
      return loop(t -> {
        List<Message> messages = new ArrayList<>(batch);
        for (int i = 0; i < batch; i++) {
          messages.add(randomMessage(randoms[t]));
        }
        return dev.fcap.store.Store.all(engine.decideAll(messages, false)).join().size();
      });
    }
  }

  private double baseline(boolean pipelined) throws Exception {
    try (SortedSetBaseline base = new SortedSetBaseline(uri, !pipelined)) {
      SplittableRandom[] randoms = randoms();
      if (!pipelined) {
        return loop(t -> {
          Message m = randomMessage(randoms[t]);
          base.decideSequentially(m.recipient(), m.content(), SortedSetBaseline.SEED);
          return 1;
        });
      }
      Object lock = new Object();
      return loop(t -> {
        List<CompletableFuture<Long>> calls = new ArrayList<>(batch * 4);
        List<Message> messages = new ArrayList<>(batch);
        for (int i = 0; i < batch; i++) {
          messages.add(randomMessage(randoms[t]));
        }
        synchronized (lock) {
          for (Message m : messages) {
            calls.addAll(base.issue(m.recipient(), m.content(), SortedSetBaseline.SEED, null));
          }
          base.flush();
        }
        calls.forEach(CompletableFuture::join);
        return batch;
      });
    }
  }

  private SplittableRandom[] randoms() {
    SplittableRandom[] r = new SplittableRandom[threads];
    for (int i = 0; i < threads; i++) {
      r[i] = new SplittableRandom(42 + i);
    }
    return r;
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
    try (RedisStore store = store(recipients); Engine engine = engine(store).policy(SEED).build()) {
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
            CompletableFuture<?> decided = engine.decide(randomMessage(random)).whenComplete((d, e) -> {
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

  // ---- memory --------------------------------------------------------------------------------

  private void memory(RedisServer server) throws Exception {
    System.out.println();
    System.out.println("| state per recipient (two recipient rules: 15/1m, 50/24h) | fcap bytes | baseline bytes "
        + "| fcap / baseline | fcap bytes, tables sized for 10^8 | baseline bytes, tables sized for 10^8 | fcap at 10^8 "
        + "| baseline at 10^8 |");
    System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    memoryRow(server, "worst case: 50 in the last 24 h, 15 of them in the last minute", worst, true);
    memoryRow(server, "typical: 10 in the last 24 h", typical, false);
  }

  private void memoryRow(RedisServer server, String name, int n, boolean worstCase) throws Exception {
    double[] fcap = perRecipient(server, n, worstCase, true);
    double[] base = perRecipient(server, n, worstCase, false);
    System.out.printf(Locale.ROOT, "| %s (%,d recipients) | %.0f | %.0f | %.3f | %.0f | %.0f | %.1f GB | %.1f GB |%n", name,
        n, fcap[0], base[0], fcap[0] / base[0], fcap[1], base[1], fcap[1] * 1e8 / 1e9, base[1] * 1e8 / 1e9);
  }

  /**
   * Bytes of the bucket arrays of db 0's key and expiry tables ({@code MEMORY STATS} counts each as
   * entries * (dictEntry 24 [+ robj 16 for the keys]) + slots * 8), and the key count. Their share
   * per key depends on how full the power-of-two tables happen to be at this N, so the 10^8 column
   * replaces it by what tables sized for that many keys cost.
   */
  private static long[] buckets(RedisServer server) throws Exception {
    long keys = (Long) server.call("DBSIZE");
    long main = 0;
    long expires = 0;
    List<?> stats = (List<?>) server.call("MEMORY", "STATS");
    for (int i = 0; i + 1 < stats.size(); i += 2) {
      if ("db.0".equals(stats.get(i))) {
        List<?> db = (List<?>) stats.get(i + 1);
        for (int j = 0; j + 1 < db.size(); j += 2) {
          if ("overhead.hashtable.main".equals(db.get(j))) {
            main = (Long) db.get(j + 1);
          } else if ("overhead.hashtable.expires".equals(db.get(j))) {
            expires = (Long) db.get(j + 1);
          }
        }
      }
    }
    long slots = (main - keys * 40) / 8 + (expires - keys * 24) / 8;
    return new long[] {slots * 8, keys};
  }

  /** Bucket bytes per key of the two tables (keys, expiries) of a Redis holding {@code keys} keys, all with a TTL. */
  private static double bucketBytesPerKey(double keys) {
    return 2 * 8 * (double) Long.highestOneBit((long) keys * 2 - 1) / keys;
  }

  /** The times of one recipient's messages, oldest first, ending now. */
  static long[] times(long now, boolean worstCase) {
    if (!worstCase) {
      long[] t = new long[10];
      for (int i = 0; i < 10; i++) {
        t[i] = now - 86_000_000L + i * 8_600_000L;
      }
      return t;
    }
    long[] t = new long[50];
    for (int i = 0; i < 35; i++) {
      t[i] = now - 86_000_000L + i * 2_400_000L; // spread over the day, before the last minute
    }
    for (int i = 0; i < 15; i++) {
      t[35 + i] = now - 59_000L + i * 3_900L; // 15 in the last minute
    }
    return t;
  }

  /** Bytes per recipient as measured at {@code n} recipients, and with tables sized for 10^8 recipients. */
  private double[] perRecipient(RedisServer server, int n, boolean worstCase, boolean fcap) throws Exception {
    server.call("FLUSHALL");
    long before = Long.parseLong(server.info("memory", "used_memory").trim());
    long bucketsBefore = buckets(server)[0];
    long now = System.currentTimeMillis();
    long[] times = times(now, worstCase);
    long admitted = 0;
    if (fcap) {
      try (RedisStore store = store(n);
          Engine engine = engine(store).callerTime(true).policy(RECIPIENT_RULES).build()) {
        for (int from = 0; from < n; from += 1000) {
          List<CompletableFuture<Decision>> pending = new ArrayList<>();
          for (long t : times) {
            for (int r = from; r < Math.min(n, from + 1000); r++) {
              pending.add(engine.decideAt(Message.builder("+1" + (5_550_000_000L + r)).content("x").build(), t));
            }
            for (CompletableFuture<Decision> d : pending) {
              admitted += d.join().allowed() ? 1 : 0;
            }
            pending.clear();
          }
        }
      }
    } else {
      try (SortedSetBaseline base = new SortedSetBaseline(uri, true)) {
        for (int from = 0; from < n; from += 1000) {
          for (long t : times) {
            List<CompletableFuture<Long>> pending = new ArrayList<>();
            for (int r = from; r < Math.min(n, from + 1000); r++) {
              pending.addAll(base.issue("+1" + (5_550_000_000L + r), null, SortedSetBaseline.RECIPIENT_ONLY, t));
            }
            long ok = pending.stream().filter(f -> f.join() == 1L).count();
            admitted += ok / 2;
          }
        }
      }
    }
    if (admitted != (long) n * times.length) {
      throw new IllegalStateException("expected every message admitted, got " + admitted);
    }
    Thread.sleep(500); // let Redis finish rehashing resized tables (serverCron)
    long after = Long.parseLong(server.info("memory", "used_memory").trim());
    long[] bucketsAfter = buckets(server);
    double measured = (after - before) / (double) n;
    double keysPerRecipient = bucketsAfter[1] / (double) n;
    double atScale = measured - (bucketsAfter[0] - bucketsBefore) / (double) n
        + keysPerRecipient * bucketBytesPerKey(1e8 * keysPerRecipient);
    return new double[] {measured, atScale};
  }
}
