package dev.fcap.bench.redis;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.store.SeedRules;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * Redis memory and CPU of keeping several recipients in one key, beside one key per recipient (the
 * store's default layout). The values are fcap's own:
 * one recipient decided through {@link RedisStore} on the worst and the typical timeline of
 * {@link RedisStoreBench}'s memory phase, its value read back and copied to every recipient. Memory:
 * {@code used_memory} after filling {@code --recipients} recipients minus before, per recipient. CPU:
 * redis-server's CPU (user + sys) per call of a script that does to one random recipient's value what
 * a decision does to it (read it, write it back 4 bytes longer or shorter, push the TTL out:
 * grouped-keys-*.lua), pipelined, beside a script that returns 1; for groups also with a random member
 * read on each call, as a sweep of expired members would. A decision's own logic, the same in both
 * layouts, is left out. Starts its own redis-server on loopback; bounded in count.
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.redis.GroupedKeysCost \
 *     [--recipients 100000] [--calls 400000] [--groups 16,64] [--listpack-value 512]
 * </pre>
 *
 * {@code --listpack-value} is the server's {@code hash-max-listpack-value} (Redis's default is 64: a
 * group whose values are longer is then a hash table, not a listpack).
 */
public final class GroupedKeysCost {
  private static final int BATCH = 100;
  private int recipients = 100_000;
  private int calls = 400_000;
  private int[] groupSizes = {16, 64};
  private int listpackValue = 512;

  public static void main(String[] args) throws Exception {
    GroupedKeysCost b = new GroupedKeysCost();
    for (int i = 0; i < args.length; i += 2) {
      String v = args[i + 1];
      switch (args[i]) {
        case "--recipients" -> b.recipients = Integer.parseInt(v);
        case "--calls" -> b.calls = Integer.parseInt(v);
        case "--groups" -> b.groupSizes = java.util.Arrays.stream(v.split(",")).mapToInt(Integer::parseInt).toArray();
        case "--listpack-value" -> b.listpackValue = Integer.parseInt(v);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    try (RedisDeployment redis = RedisDeployment.standalone()) {
      b.run(redis.servers().get(0), redis.uri());
    }
  }

  private void run(RedisServer server, String uri) throws Exception {
    int largestGroup = java.util.Arrays.stream(groupSizes).max().orElse(1);
    server.call("CONFIG", "SET", "hash-max-listpack-entries", String.valueOf(Math.max(128, largestGroup)));
    server.call("CONFIG", "SET", "hash-max-listpack-value", String.valueOf(listpackValue));
    System.out.printf(Locale.ROOT, "%,d recipients, %,d calls, hash-max-listpack-value %d%n%n", recipients, calls,
        listpackValue);
    System.out.println("| recipient state | layout | value bytes | Redis bytes per recipient | encoding "
        + "| redis-server CPU per call (us) | of which the access (us, minus `return 1`) |");
    System.out.println("| --- | --- | ---: | ---: | --- | ---: | ---: |");
    RedisClient client = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE)) {
      for (boolean worst : new boolean[] {true, false}) {
        String state = worst ? "worst: 50 in 24 h, 15 in the last minute" : "typical: 10 in 24 h";
        Sample sample = recipientValue(server, uri, c, worst);
        byte[] value = sample.value();
        long ttl = sample.ttl();
        double trivial = cpuPerCall(server, c, "return 1", i -> new byte[0][], i -> new byte[0][]);
        row(state, "a key per recipient (now)", value, fillStrings(server, c, value, ttl), encoding(server, key(0)),
            cpuPerCall(server, c, script("grouped-keys-string.lua"), i -> new byte[][] {key(i)},
                i -> new byte[][] {bytes(value.length), bytes(ttl)}), trivial);
        for (int g : groupSizes) {
          int groups = Math.max(1, recipients / g);
          double perRecipient = fillGroups(server, c, value, ttl, groups);
          String encoding = encoding(server, groupKey(0));
          for (boolean sweep : new boolean[] {false, true}) {
            byte[] sweeps = bytes(sweep ? 1 : 0);
            row(state, "groups of " + g + " recipients in a hash" + (sweep ? ", and a random member read (a sweep)" : ""),
                value, perRecipient, encoding, cpuPerCall(server, c, script("grouped-keys-group.lua"),
                    i -> new byte[][] {groupKey(i % groups)},
                    i -> new byte[][] {field(i), bytes(value.length), bytes(ttl), sweeps}), trivial);
          }
        }
      }
    } finally {
      client.shutdown();
    }
  }

  private static void row(String state, String layout, byte[] value, double bytes, String encoding, double cpu,
      double trivial) {
    System.out.printf(Locale.ROOT, "| %s | %s | %d | %.1f | %s | %.2f | %.2f |%n", state, layout, value.length, bytes,
        encoding, cpu, cpu - trivial);
  }

  /** A recipient's value as fcap wrote it, and the TTL fcap gave its key. */
  private record Sample(byte[] value, long ttl) {}

  /** One recipient decided by fcap on the timeline. */
  private static Sample recipientValue(RedisServer server, String uri, StatefulRedisConnection<byte[], byte[]> c,
      boolean worst) throws Exception {
    server.call("FLUSHALL");
    try (RedisStore store = RedisStore.connect(uri);
        Engine engine = Engine.builder(store).callerTime(true).policy(SeedRules.RECIPIENT_RULES).build()) {
      for (long t : MemoryPhase.times(System.currentTimeMillis(), worst)) {
        if (!engine.decideAt(Message.builder(recipient(0)).content("x").build(), t).join().allowed()) {
          throw new IllegalStateException("expected every message of the timeline admitted");
        }
      }
    }
    // the recipient's key; the other is the engine's decision-id key, one per deployment
    List<byte[]> keys = c.sync().keys("*" + recipient(0) + "*");
    if (keys.size() != 1) {
      throw new IllegalStateException("expected the recipient's one key, found " + keys.size());
    }
    return new Sample(c.sync().get(keys.get(0)), c.sync().pttl(keys.get(0)));
  }

  private double fillStrings(RedisServer server, StatefulRedisConnection<byte[], byte[]> c, byte[] value, long ttl)
      throws Exception {
    RedisAsyncCommands<byte[], byte[]> async = c.async();
    return fill(server, c, i -> List.of(async.psetex(key(i), ttl, value)));
  }

  private double fillGroups(RedisServer server, StatefulRedisConnection<byte[], byte[]> c, byte[] value, long ttl,
      int groups) throws Exception {
    RedisAsyncCommands<byte[], byte[]> async = c.async();
    return fill(server, c, i -> List.of(async.hset(groupKey(i % groups), field(i), value),
        async.pexpire(groupKey(i % groups), ttl)));
  }

  /** Bytes per recipient after writing every recipient with {@code write}, from an empty Redis. */
  private double fill(RedisServer server, StatefulRedisConnection<byte[], byte[]> c,
      IntFunction<List<RedisFuture<?>>> write) throws Exception {
    server.call("FLUSHALL");
    long before = usedMemory(server);
    pipelined(c, recipients, 1000, write);
    Thread.sleep(500); // let Redis finish rehashing resized tables (serverCron), as RedisStoreBench does
    return (usedMemory(server) - before) / (double) recipients;
  }

  /** redis-server CPU (us) per call of {@code script} on random recipients, in pipelined batches. */
  private double cpuPerCall(RedisServer server, StatefulRedisConnection<byte[], byte[]> c, String script,
      IntFunction<byte[][]> keys, IntFunction<byte[][]> args) throws Exception {
    String sha = c.sync().scriptLoad(script.getBytes(StandardCharsets.UTF_8));
    RedisAsyncCommands<byte[], byte[]> async = c.async();
    SplittableRandom random = new SplittableRandom(1);
    double before = cpu(server);
    pipelined(c, calls, BATCH, i -> {
      int r = random.nextInt(recipients);
      return List.of(async.evalsha(sha, ScriptOutputType.INTEGER, keys.apply(r), args.apply(r)));
    });
    return (cpu(server) - before) * 1e6 / calls;
  }

  /**
   * Sends the commands of units 0 to {@code count - 1} ({@code unit} issues unit i's), flushing and
   * awaiting them every {@code batch} commands.
   */
  private static void pipelined(StatefulRedisConnection<byte[], byte[]> c, int count, int batch,
      IntFunction<List<RedisFuture<?>>> unit) throws Exception {
    c.setAutoFlushCommands(false);
    try {
      List<RedisFuture<?>> pending = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        pending.addAll(unit.apply(i));
        if (pending.size() >= batch || i == count - 1) {
          c.flushCommands();
          for (RedisFuture<?> f : pending) {
            f.get(10, TimeUnit.SECONDS);
          }
          pending.clear();
        }
      }
    } finally {
      c.setAutoFlushCommands(true);
    }
  }

  private static String encoding(RedisServer server, byte[] key) throws IOException {
    return String.valueOf(server.call("OBJECT", "ENCODING", new String(key, StandardCharsets.ISO_8859_1)));
  }

  private static long usedMemory(RedisServer server) throws IOException {
    return Long.parseLong(server.info("memory", "used_memory").trim());
  }

  private static double cpu(RedisServer server) throws IOException {
    return Double.parseDouble(server.info("cpu", "used_cpu_user")) + Double.parseDouble(server.info("cpu", "used_cpu_sys"));
  }

  private static String script(String name) throws IOException {
    try (InputStream in = GroupedKeysCost.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** 12 bytes, like the benchmarks' recipients. */
  private static String recipient(int i) {
    return "+1" + (5_550_000_000L + i);
  }

  /** The shape of fcap's recipient key (26 bytes: tag, tenant, recipient). */
  private static byte[] key(int i) {
    return ("fc:{r\u0007default" + recipient(i) + "}").getBytes(StandardCharsets.ISO_8859_1);
  }

  private static byte[] groupKey(int group) {
    return ("fc:{g\u0007default+" + group + "}").getBytes(StandardCharsets.ISO_8859_1);
  }

  private static byte[] field(int i) {
    return recipient(i).getBytes(StandardCharsets.ISO_8859_1);
  }

  private static byte[] bytes(long n) {
    return Long.toString(n).getBytes(StandardCharsets.US_ASCII);
  }
}
