package dev.fcap.bench.redis;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.store.SeedRules;
import dev.fcap.store.Store;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.store.redis.testing.RedisDeployment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The cost of {@code RedisStore.Builder.replicaAcks(1, ...)} (a WAIT after every writing call, one
 * per pipelined batch) on a Sentinel group started here (a master, one replica, one sentinel, on
 * loopback): decisions/s with and without it, alternating, on one deployment, for single decisions
 * from many threads and for pipelined batches; medians of the rounds and their ratio.
 *
 * <pre>
 * ./mvnw -B -q -pl fcap-bench -am package -DskipTests
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.redis.ReplicaAcksBench [rounds 3] [seconds 5]
 * </pre>
 */
public final class ReplicaAcksBench {
  private static final Policy SEED = SeedRules.RECIPIENT_RULES;

  private ReplicaAcksBench() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    try (RedisDeployment d = RedisDeployment.start(RedisDeployment.Kind.SENTINEL);
        RedisStore plain = RedisStore.builder(d.uri()).build();
        RedisStore acked = RedisStore.builder(d.uri()).replicaAcks(1, Duration.ofMillis(100)).build()) {
      for (String mode : List.of("single x16 threads", "batch 100 x4 threads")) {
        boolean batch = mode.startsWith("batch");
        double[] a = new double[rounds];
        double[] b = new double[rounds];
        run(plain, batch, 1); // warm-up, not counted
        run(acked, batch, 1);
        for (int r = 0; r < rounds; r++) {
          a[r] = run(plain, batch, seconds);
          b[r] = run(acked, batch, seconds);
        }
        Arrays.sort(a);
        Arrays.sort(b);
        System.out.printf(Locale.ROOT, "%-22s no acks %,.0f/s  replicaAcks 1 %,.0f/s  ratio %.2f (medians of %d x %d s)%n",
            mode, a[rounds / 2], b[rounds / 2], b[rounds / 2] / a[rounds / 2], rounds, seconds);
      }
    }
  }

  private static double run(Store store, boolean batch, int seconds) throws Exception {
    Engine engine = Engine.builder(store).policy(SEED).build();
    int threads = batch ? 4 : 16;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    long start = System.nanoTime();
    List<Future<Long>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int seed = t;
      done.add(pool.submit(() -> {
        SplittableRandom rnd = new SplittableRandom(seed * 7919L + System.nanoTime());
        long n = 0;
        while (System.nanoTime() < end) {
          if (batch) {
            List<Message> ms = new ArrayList<>(100);
            for (int i = 0; i < 100; i++) {
              ms.add(Message.builder("r" + rnd.nextInt(1_000_000)).build());
            }
            Store.all(engine.decideAll(ms, false)).join();
            n += 100;
          } else {
            engine.decide(Message.builder("r" + rnd.nextInt(1_000_000)).build()).join();
            n++;
          }
        }
        return n;
      }));
    }
    long total = 0;
    for (Future<Long> f : done) {
      total += f.get();
    }
    pool.shutdown();
    return total / ((System.nanoTime() - start) / 1e9);
  }
}
