package dev.fcap.bench.redis;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.store.SeedRules;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.store.redis.testing.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * RedisStoreBench's memory phase: Redis bytes per recipient of fcap and of the sorted-set baseline under
 * the two recipient rules, as measured and with Redis's key tables sized for 10^8 recipients.
 */
final class MemoryPhase {
  private final RedisStoreBench bench;
  private final String uri;

  MemoryPhase(RedisStoreBench bench, String uri) {
    this.bench = bench;
    this.uri = uri;
  }

  /** The memory table: a row for the worst case and one for the typical recipient. */
  void run(RedisServer server, int worst, int typical) throws Exception {
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
      try (RedisStore store = bench.store(n);
          Engine engine = bench.engine(store).callerTime(true).policy(SeedRules.RECIPIENT_RULES).build()) {
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
