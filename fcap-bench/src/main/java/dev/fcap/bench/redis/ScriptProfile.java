package dev.fcap.bench.redis;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.store.redis.RedisStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * Redis-side cost of one decision: drives a running Redis (started by the caller, e.g. pinned to a
 * core with {@code taskset}) with pipelined decisions and reads Redis's own accounting, so the
 * figures do not depend on how fast this client is: {@code INFO commandstats} usec_per_call of the
 * script call (the script's execution inside Redis, network excluded) and redis-server CPU (user +
 * sys, network included) per decision. Every repetition flushes Redis and replays the same decisions;
 * the minimum, median and maximum over the repetitions are printed. Bounded in count.
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.redis.ScriptProfile --uri redis://127.0.0.1:6390 \
 *     [--system fcap|baseline] [--recipients 1000000] [--decisions 200000] [--batch 100] [--reps 5]
 * </pre>
 *
 * {@code --recipients 1000} makes every log full (most decisions refused); {@code 1000000} leaves
 * most recipients with a few events, as in {@link RedisStoreBench}.
 */
public final class ScriptProfile {
  public static void main(String[] args) throws Exception {
    String uri = null;
    String system = "fcap";
    int recipients = 1_000_000;
    int decisions = 200_000;
    int batch = 100;
    int reps = 5;
    for (int i = 0; i < args.length; i += 2) {
      String v = args[i + 1];
      switch (args[i]) {
        case "--uri" -> uri = v;
        case "--system" -> system = v;
        case "--recipients" -> recipients = Integer.parseInt(v);
        case "--decisions" -> decisions = Integer.parseInt(v);
        case "--batch" -> batch = Integer.parseInt(v);
        case "--reps" -> reps = Integer.parseInt(v);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (uri == null) {
      throw new IllegalArgumentException("--uri redis://host:port is required (a Redis you started)");
    }
    RedisClient admin = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<String, String> c = admin.connect(StringCodec.UTF8)) {
      RedisCommands<String, String> redis = c.sync();
      Driver driver = system.equals("baseline") ? baseline(uri) : fcap(uri);
      try {
        double[] cpus = new double[reps];
        double[] usecs = new double[reps];
        for (int rep = 0; rep < reps; rep++) {
          // every repetition replays the same decisions on an empty Redis
          redis.flushall();
          SplittableRandom random = new SplittableRandom(42);
          driver.run(random, recipients, Math.max(batch, decisions / 4), batch); // warm-up, not counted
          redis.configResetstat();
          double cpu0 = cpu(redis);
          driver.run(random, recipients, decisions, batch);
          cpus[rep] = (cpu(redis) - cpu0) * 1e6 / decisions;
          usecs[rep] = usecPerDecision(redis.info("commandstats"), decisions);
        }
        System.out.printf(Locale.ROOT, "%s recipients=%d decisions=%d batch=%d reps=%d: redis CPU us/decision %s; "
            + "script us/decision (commandstats) %s%n", system, recipients, decisions, batch, reps, summary(cpus),
            summary(usecs));
      } finally {
        driver.close();
      }
    } finally {
      admin.shutdown();
    }
  }

  /** min / median / max. */
  private static String summary(double[] values) {
    double[] v = values.clone();
    java.util.Arrays.sort(v);
    return String.format(Locale.ROOT, "min %.2f median %.2f max %.2f", v[0], v[v.length / 2], v[v.length - 1]);
  }

  private static double usecPerDecision(String commandstats, int decisions) {
    return CommandStats.scriptUsec(commandstats) / (double) decisions;
  }

  private static double cpu(RedisCommands<String, String> redis) {
    double total = 0;
    for (String line : redis.info("cpu").split("\r?\n")) {
      if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
        total += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    return total;
  }

  private static Message message(SplittableRandom random, int recipients) {
    return Message.builder("+1" + (5_550_000_000L + random.nextInt(recipients)))
        .content("template " + random.nextInt(20) + ": your code is ready").build();
  }

  private interface Driver extends AutoCloseable {
    void run(SplittableRandom random, int recipients, int decisions, int batch);

    @Override
    void close();
  }

  private static Driver fcap(String uri) {
    RedisStore store = RedisStore.connect(uri);
    Engine engine = Engine.builder(store).policy(RedisStoreBench.seed()).build();
    return new Driver() {
      @Override
      public void run(SplittableRandom random, int recipients, int decisions, int batch) {
        for (int done = 0; done < decisions; done += batch) {
          List<Message> messages = new ArrayList<>(batch);
          for (int i = 0; i < batch; i++) {
            messages.add(message(random, recipients));
          }
          dev.fcap.store.Store.all(engine.decideAll(messages, false)).join();
        }
      }

      @Override
      public void close() {
        engine.close();
        store.close();
      }
    };
  }

  private static Driver baseline(String uri) {
    SortedSetBaseline base = new SortedSetBaseline(uri, false);
    return new Driver() {
      @Override
      public void run(SplittableRandom random, int recipients, int decisions, int batch) {
        for (int done = 0; done < decisions; done += batch) {
          List<CompletableFuture<Long>> calls = new ArrayList<>(batch * 4);
          for (int i = 0; i < batch; i++) {
            Message m = message(random, recipients);
            calls.addAll(base.issue(m.recipient(), m.content(), SortedSetBaseline.SEED, null));
          }
          base.flush();
          calls.forEach(CompletableFuture::join);
        }
      }

      @Override
      public void close() {
        base.close();
      }
    };
  }
}
