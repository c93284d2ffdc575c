package dev.fcap.bench.redis;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.ManualClock;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.store.redis.testing.RedisDeployment;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The worst script calls of a large sliding log on a real redis-server (docs/benchmarks.md, "Large
 * limits"): fills one log of a {@code --limit} (default 10^7) rule with
 * {@code --entries} messages (pipelined), then, with {@code slowlog-log-slower-than 1000} set and the
 * statistics reset, times each kind of call that touches it: decisions on the full log, a clock
 * step back, releases of the newest message and of messages 1,000 / 10,000 / 60,000 entries back
 * (a release moves the entries after it), and an inspection of the partition (which must not read
 * the log whole). Prints, per kind, the slowest call seen by the client, then {@code SLOWLOG GET} and
 * {@code LATENCY HISTOGRAM evalsha}. Starts and stops its own redis-server on loopback.
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.redis.LargeLogLatency [--entries 1000000] [--limit 10000000]
 * </pre>
 */
public final class LargeLogLatency {
  private LargeLogLatency() {}

  public static void main(String[] args) throws Exception {
    int entries = 1_000_000;
    long limit = 10_000_000L;
    for (int i = 0; i < args.length; i += 2) {
      switch (args[i]) {
        case "--entries" -> entries = Integer.parseInt(args[i + 1]);
        case "--limit" -> limit = Long.parseLong(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i] + "; use --entries N, --limit L");
      }
    }
    Rule large = Rule.of("large", limit, Duration.ofHours(1), Dimension.RECIPIENT);
    Policy policy = new Policy("default", 1, List.of(large));
    try (RedisDeployment redis = RedisDeployment.standalone()) {
      ManualClock clock = new ManualClock();
      RedisStore store = RedisStore.builder(redis.uri()).clock(clock)
          .commandTimeout(Duration.ofSeconds(60)).connectTimeout(Duration.ofSeconds(60)).build();
      Engine engine = Engine.builder(store).clock(clock).callerTime(true).policy(policy).build();
      long t0 = clock.millis();
      // entries spread over 50 minutes of the 1 h window: all held, none pruned
      long spread = Duration.ofMinutes(50).toMillis();
      List<String> ids = new ArrayList<>(entries);
      Deque<CompletableFuture<Decision>> inFlight = new ArrayDeque<>();
      long started = System.nanoTime();
      for (int i = 0; i < entries; i++) {
        inFlight.add(engine.decideAt(message(), t0 + i * spread / entries));
        if (inFlight.size() >= 256) {
          ids.add(inFlight.poll().join().decisionId());
        }
      }
      while (!inFlight.isEmpty()) {
        ids.add(inFlight.poll().join().decisionId());
      }
      System.out.printf("filled %,d entries (limit %,d) in %.0f s%n", entries, limit, (System.nanoTime() - started) / 1e9);
      long now = t0 + spread;
      RedisClient admin = RedisClient.create(RedisURI.create(redis.uri()));
      try (StatefulRedisConnection<String, String> c = admin.connect(StringCodec.UTF8)) {
        RedisCommands<String, String> r = c.sync();
        r.configSet("slowlog-log-slower-than", "1000");
        r.configSet("slowlog-max-len", "1024");
        r.slowlogReset();
        r.configResetstat();
        long[] t = {now};
        time("decision on the full log", 1000, () -> engine.decideAt(message(), ++t[0]).join());
        time("clock step back of 3 s (decided at the partition's time)", 100,
            () -> engine.decideAt(message(), t[0] - 3000).join());
        time("release of the newest message", 100, () -> {
          Decision d = engine.decideAt(message(), ++t[0]).join();
          engine.release(d.decisionId()).join();
        });
        for (int back : new int[] {1_000, 10_000, 60_000}) {
          if (back < ids.size()) {
            int at = ids.size() - back;
            time("release of a message " + back + " entries back", 1, () -> engine.release(ids.get(at)).join());
          }
        }
        time("inspection of the partition (a dry run of the log: O(log n))", 1,
            () -> engine.inspect("default", "everyone").join());
        System.out.println("SLOWLOG (calls over 1 ms, microseconds):");
        for (Object entry : r.slowlogGet(1024)) {
          List<?> e = (List<?>) entry;
          System.out.println("  " + e.get(2) + " us  " + String.valueOf(e.get(3)).replaceAll("[^\\x20-\\x7e]", ".")
              .substring(0, Math.min(60, String.valueOf(e.get(3)).length())));
        }
        System.out.println(r.info("commandstats").lines().filter(l -> l.contains("evalsha")).findFirst().orElse(""));
        System.out.println("LATENCY HISTOGRAM evalsha:");
        io.lettuce.core.protocol.ProtocolKeyword latency = new io.lettuce.core.protocol.ProtocolKeyword() {
          @Override
          public byte[] getBytes() {
            return "LATENCY".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
          }

          @Override
          public String name() {
            return "LATENCY";
          }
        };
        System.out.println(r.dispatch(latency,
            new io.lettuce.core.output.NestedMultiOutput<>(StringCodec.UTF8),
            new io.lettuce.core.protocol.CommandArgs<>(StringCodec.UTF8).add("HISTOGRAM").add("evalsha")));
      } finally {
        admin.shutdown();
      }
      engine.close();
    }
  }

  private static Message message() {
    return Message.builder("everyone").build();
  }

  /** Runs {@code call} {@code n} times; prints the slowest and the median as the client saw them. */
  private static void time(String what, int n, Runnable call) {
    long[] took = new long[n];
    for (int i = 0; i < n; i++) {
      long s = System.nanoTime();
      call.run();
      took[i] = System.nanoTime() - s;
    }
    java.util.Arrays.sort(took);
    System.out.printf("%-60s n=%-5d client median %8.3f ms, max %8.3f ms%n", what, n, took[n / 2] / 1e6,
        took[n - 1] / 1e6);
  }
}
