package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.store.redis.RedisStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What release records (what releases by decision id from any node keep) cost: decisions/s on the
 * embedded store with release records on (the default horizon) and off ({@code release.horizon: 0}),
 * rounds interleaved in one run, one thread; the store's bytes per admitted decision; and with
 * {@code --redis URI} (an empty Redis: it is flushed), the bytes per admitted decision that Redis
 * reports (MEMORY USAGE summed over every key).
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.ReleaseRecordCost [--decisions N] [--rounds R] [--redis URI]
 * </pre>
 */
public final class ReleaseRecordCost {
  private ReleaseRecordCost() {}

  public static void main(String[] args) {
    int decisions = 1_000_000;
    int rounds = 3;
    String redis = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--decisions" -> decisions = Integer.parseInt(args[i + 1]);
        case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
        case "--redis" -> redis = args[i + 1];
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + " (--decisions N, --rounds R, --redis URI)");
      }
    }
    run(decisions / 10, false, null); // warm-up
    run(decisions / 10, true, null);
    for (int r = 0; r < rounds; r++) {
      for (boolean on : new boolean[] {true, false}) {
        Result x = run(decisions, on, null);
        System.out.printf("embedded round %d release records %-3s: %,.0f decisions/s, %,d admitted, %.1f store bytes"
            + " per admitted decision%n", r + 1, on ? "on" : "off", x.perSecond, x.admitted, x.bytesPerAdmitted);
      }
    }
    if (redis != null) {
      for (boolean on : new boolean[] {true, false}) {
        flush(redis);
        Result x = run(20_000, on, redis);
        System.out.printf("redis release records %-3s: %,d admitted, %.1f bytes per admitted decision (MEMORY USAGE)%n",
            on ? "on" : "off", x.admitted, x.bytesPerAdmitted);
      }
    }
  }

  private record Result(double perSecond, long admitted, double bytesPerAdmitted) {}

  /**
   * {@code n} decisions of the seed policy, 10 per recipient with distinct contents (all admitted: 10
   * is under every limit), one millisecond apart.
   */
  private static Result run(int n, boolean on, String redis) {
    AtomicLong now = new AtomicLong(1_767_225_600_000L);
    Store store = redis == null ? MemoryStore.builder().clock(now::get).build()
        : RedisStore.builder(redis).clock(now::get).build();
    Engine.Builder b = Engine.builder(store).clock(now::get).policies(SeedPolicy.load());
    if (!on) {
      b.releaseHorizon(Duration.ZERO);
    }
    try (Engine engine = b.build()) {
      long admitted = 0;
      long start = System.nanoTime();
      for (int i = 0; i < n; i++) {
        Message m = Message.builder("+86139" + (i / 10)).content("content " + (i % 10)).build();
        admitted += engine.decide(m).join().allowed() ? 1 : 0;
        now.incrementAndGet();
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      long bytes = redis == null ? ((MemoryStore) store).bytes() : memoryUsage(redis);
      return new Result(n / seconds, admitted, (double) bytes / admitted);
    }
  }

  private static void flush(String uri) {
    RedisClient client = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE)) {
      c.sync().flushall();
    } finally {
      client.shutdown();
    }
  }

  private static long memoryUsage(String uri) {
    RedisClient client = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE)) {
      long total = 0;
      for (byte[] key : c.sync().keys("*")) {
        Long usage = c.sync().memoryUsage(key);
        total += usage == null ? 0 : usage;
      }
      return total;
    } finally {
      client.shutdown();
    }
  }
}
