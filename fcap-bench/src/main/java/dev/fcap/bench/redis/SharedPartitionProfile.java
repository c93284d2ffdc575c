package dev.fcap.bench.redis;

import dev.fcap.engine.Engine;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.Store;
import dev.fcap.store.redis.RedisStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Redis-side cost of a decision as a shared partition accumulates release records: every decision
 * goes to a new recipient on one channel, under a channel-wide cap (10^6 per hour, keyed
 * {@code [channel]}) and a per-recipient cap, release records on (the default horizon, 24 h), so
 * every decision is admitted and writes a record into the channel's partition. After each slice of
 * {@code --step} decisions it prints the script's time per decision in that slice (both partitions) ({@code INFO
 * commandstats}, network excluded), the channel partition value's size and its entries hash's length.
 * With records in the value, the time per call grows with the records held; with the entries hash it
 * stays flat. {@code --records off} ({@code releaseHorizon(0)}) gives the same traffic without records.
 * Bounded in count; flushes the Redis it is given.
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.redis.SharedPartitionProfile --uri redis://127.0.0.1:6390 \
 *     [--decisions 20000] [--step 1000] [--batch 100] [--records on|off]
 * </pre>
 */
public final class SharedPartitionProfile {
  private static final Policy POLICY = new Policy("default", 1, List.of(
      Rule.of("channel-per-hour", 1_000_000, Duration.ofHours(1), Dimension.CHANNEL),
      Rule.of("recipient-per-day", 50, Duration.ofDays(1), Dimension.RECIPIENT)));

  public static void main(String[] args) {
    String uri = null;
    int decisions = 20_000;
    int step = 1_000;
    int batch = 100;
    boolean records = true;
    for (int i = 0; i < args.length; i += 2) {
      String v = args[i + 1];
      switch (args[i]) {
        case "--uri" -> uri = v;
        case "--decisions" -> decisions = Integer.parseInt(v);
        case "--step" -> step = Integer.parseInt(v);
        case "--batch" -> batch = Integer.parseInt(v);
        case "--records" -> records = !v.equals("off");
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (uri == null) {
      throw new IllegalArgumentException("--uri redis://host:port is required (a Redis you started; it is flushed)");
    }
    if (step % batch != 0) {
      throw new IllegalArgumentException("--step must be a multiple of --batch");
    }
    RedisClient admin = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<byte[], byte[]> c = admin.connect(ByteArrayCodec.INSTANCE);
         RedisStore store = RedisStore.connect(uri)) {
      RedisCommands<byte[], byte[]> redis = c.sync();
      redis.flushall();
      Engine.Builder builder = Engine.builder(store).policy(POLICY);
      Engine engine = (records ? builder : builder.releaseHorizon(Duration.ZERO)).build();
      byte[] channelKey = channelKey(redis);
      int done = 0;
      System.out.println("records held | script us per decision in the slice | channel value bytes (STRLEN) | entries hash fields (HLEN)");
      while (done < decisions) {
        redis.configResetstat();
        int from = done;
        for (int s = 0; s < step && done < decisions; s += batch) {
          List<Message> messages = new ArrayList<>(batch);
          for (int i = 0; i < batch; i++) {
            messages.add(Message.builder("+1" + (5_550_000_000L + done + i)).channel("sms").build());
          }
          Store.all(engine.decideAll(messages, false)).join();
          done += batch;
        }
        if (channelKey == null) {
          channelKey = channelKey(redis);
        }
        byte[] entries = java.util.Arrays.copyOf(channelKey, channelKey.length + 2);
        entries[entries.length - 1] = 'M';
        System.out.printf(Locale.ROOT, "%,12d | %8.2f | %,12d | %,8d%n", done, scriptUsec(redis) / (double) (done - from),
            redis.strlen(channelKey), redis.type(entries).equals("hash") ? redis.hlen(entries) : 0L);
      }
      engine.close();
    } finally {
      admin.shutdown();
    }
  }

  /** The channel partition's key: the one partition key (not a hash or block key) shared by every decision. */
  private static byte[] channelKey(RedisCommands<byte[], byte[]> redis) {
    for (byte[] key : redis.keys("*{s*")) {
      if (key[key.length - 1] == '}') {
        return key;
      }
    }
    return null;
  }

  /** The script's time since the last CONFIG RESETSTAT (both partitions of every decision), in us. */
  private static long scriptUsec(RedisCommands<byte[], byte[]> redis) {
    return CommandStats.scriptUsec(redis.info("commandstats"));
  }
}
