package dev.fcap.oracle;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.Dimension;
import dev.fcap.store.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Many threads on many recipients at once, while the store sweeps and grows: each of
 * {@code recipients} recipients may get {@value #LIMIT} messages an hour, and every thread keeps
 * asking for every one of them (distinct recipients share segments and locks). Beside them, every
 * thread sends to fresh recipients of another tenant whose 1-second rule expires as the clock
 * moves on, so the store keeps adding partitions (tables resize) and sweeping expired ones.
 * The clock advances by 1 s per round, up to 40 s: the hourly windows never move. Plain Java, for
 * the embedded store (fcap-core) and for Redis (fcap-redis).
 */
public final class ManyRecipients {
  public static final int LIMIT = 15;
  public static final Policy HOT = new Policy("hot", 1,
      List.of(Rule.of("per-hour", LIMIT, Duration.ofHours(1), Dimension.RECIPIENT)));
  public static final Policy CHURN = new Policy("churn", 1,
      List.of(Rule.of("per-second", 1, Duration.ofSeconds(1), Dimension.RECIPIENT)));

  private ManyRecipients() {}

  /** Admitted messages per hot recipient, after {@code threads} threads each asked {@code perThread} times. */
  public static long[] run(Engine engine, ManualClock clock, int threads, int recipients, int perThread)
      throws Exception {
    AtomicLongArray admitted = new AtomicLongArray(recipients);
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      done.add(pool.submit(() -> {
        SplittableRandom random = new SplittableRandom(thread);
        start.await();
        for (int i = 0; i < perThread; i++) {
          int r = random.nextInt(recipients);
          if (engine.decide(Message.builder("hot-" + r).tenant("hot").build()).join().allowed()) {
            admitted.incrementAndGet(r);
          }
          engine.decide(Message.builder("churn-" + thread + "-" + i).tenant("churn").build()).join();
          if (thread == 0 && i % Math.max(1, perThread / 40) == 0) {
            clock.advance(1000); // at most 40 s in all: hourly windows stay put, 1-second counters expire
          }
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<?> f : done) {
      f.get(120, TimeUnit.SECONDS);
    }
    pool.shutdown();
    long[] out = new long[recipients];
    for (int r = 0; r < recipients; r++) {
      out[r] = admitted.get(r);
    }
    return out;
  }
}
