package dev.fcap.bench.redis;

import dev.fcap.bench.LocalTimePolicy;
import dev.fcap.engine.Engine;
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
 *     [--phases throughput,latency,memory,store] [--release-records on|off (default on)]
 *     [--per-group K (default 0: a key per recipient; else the grouped layout, a phase's recipients / K groups)]
 *     [--policy seed|local (default seed: the policy of fcap's throughput rows)]
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
 *
 * <p>{@code --policy local} gives fcap's throughput rows the seed policy plus a send window and a cap
 * per local day in the recipient's zone, every message carrying a zone ({@link LocalTimePolicy}): the
 * cost of local time beside a {@code --policy seed} run. The baseline keeps the seed policy.
 */
public final class RedisStoreBench {
  private static final Policy SEED = SeedRules.POLICY;

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
  /** Whether fcap's throughput rows decide the seed plus local time ({@code --policy local}). */
  private boolean localTime;

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
        case "--policy" -> b.localTime = switch (v) {
          case "seed" -> false;
          case "local" -> true;
          default -> throw new IllegalArgumentException("--policy is seed or local, not " + v);
        };
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
    if (phases.contains("store")) {
      storeOnly();
    }
    if (phases.contains("throughput")) {
      fcapUnpiped = throughput();
    }
    if (phases.contains("latency")) {
      double rate = latencyRate > 0 ? latencyRate : fcapUnpiped / 2;
      flush(server);
      int measured = latencySeconds > 0 ? latencySeconds : Math.max(10, seconds);
      new LatencyPhase(this, recipients, latencyThreads, closedLoop)
          .run(server, rate, latencyRate > 0 ? "--latency-rate" : "half the unpipelined max", measured);
    }
    if (phases.contains("memory") && server != null) {
      new MemoryPhase(this, uri).run(server, worst, typical);
    }
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
    row("fcap RedisStore, " + fcapPolicyName() + " (1 EVALSHA)", fcapUnpiped, fcapPiped);
    row("sorted-set baseline, seed policy (4 EVALSHA)", baseUnpiped, basePiped);
    System.out.printf(Locale.ROOT, "| fcap / baseline | %.2fx | %.2fx |%n", fcapUnpiped / baseUnpiped, fcapPiped / basePiped);
    System.out.printf(Locale.ROOT, "| fcap / trivial EVALSHA | %.2f | %.2f |%n", fcapUnpiped / trivialUnpiped,
        fcapPiped / trivialPiped);
    var c = cpuPerDecision;
    System.out.println();
    System.out.println("| same Redis core: decisions per second of redis-server CPU (median) | unpipelined | pipelined |");
    System.out.println("| --- | ---: | ---: |");
    row("trivial EVALSHA returning 1 (calls)", c.get("trivial-unpipelined"), c.get("trivial-pipelined"));
    row("fcap RedisStore, " + fcapPolicyName(), c.get("fcap-unpipelined"), c.get("fcap-pipelined"));
    row("sorted-set baseline, seed policy", c.get("baseline-unpipelined"), c.get("baseline-pipelined"));
    System.out.printf(Locale.ROOT, "| fcap / baseline | %.2fx | %.2fx |%n", c.get("fcap-unpipelined") / c.get("baseline-unpipelined"),
        c.get("fcap-pipelined") / c.get("baseline-pipelined"));
    System.out.printf(Locale.ROOT, "| fcap / trivial EVALSHA | %.2f | %.2f |%n", c.get("fcap-unpipelined") / c.get("trivial-unpipelined"),
        c.get("fcap-pipelined") / c.get("trivial-pipelined"));
    flush(server);
    return fcapUnpiped;
  }

  /**
   * fcap's pipelined row alone: the store's cost that the deployed path (scripts/bench-deployed) is
   * held to, which reads the Redis CPU of every master itself (with {@code --uri} this benchmark
   * knows none of them).
   */
  private void storeOnly() throws Exception {
    double piped = median("fcap-pipelined", () -> fcap(true));
    System.out.printf(Locale.ROOT, "store: fcap RedisStore pipelined, %s: %,.0f decisions/s (median of %d)%n",
        fcapPolicyName(), piped, reps);
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
  RedisStore store(int population) {
    // a benchmark measures what Redis does, not a caller's patience: a loaded machine may queue a
    // batch past the default second, which would end the run instead of slowing it
    return RedisStore.builder(uri).groups(perGroup == 0 ? 0 : Math.max(1, population / perGroup))
        .commandTimeout(Duration.ofSeconds(10)).build();
  }

  /** An engine on {@code store}, with releases by decision id on (the default) or off ({@code --release-records}). */
  Engine.Builder engine(RedisStore store) {
    return releaseRecords ? Engine.builder(store) : Engine.builder(store).releaseHorizon(Duration.ZERO);
  }

  Message randomMessage(SplittableRandom random) {
    return Message.builder("+1" + (5_550_000_000L + random.nextInt(recipients)))
        .content("template " + random.nextInt(20) + ": your code is ready").build();
  }

  private String fcapPolicyName() {
    return localTime ? "seed + local time" : "seed policy";
  }

  /** A message of fcap's throughput rows: with its recipient's zone under {@code --policy local}. */
  private Message fcapMessage(SplittableRandom random) {
    Message m = randomMessage(random);
    return localTime ? LocalTimePolicy.inZone(m) : m;
  }

  private double fcap(boolean pipelined) throws Exception {
    Policy policy = localTime ? LocalTimePolicy.of(SEED) : SEED;
    try (RedisStore store = store(recipients); Engine engine = engine(store).policy(policy).build()) {
      SplittableRandom[] randoms = randoms();
      if (!pipelined) {
        return loop(t -> {
          engine.decide(fcapMessage(randoms[t])).join();
          return 1;
        });
      }
      return loop(t -> {
        List<Message> messages = new ArrayList<>(batch);
        for (int i = 0; i < batch; i++) {
          messages.add(fcapMessage(randoms[t]));
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
}
