package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.redis.testing.RedisExtension;
import dev.fcap.store.redis.testing.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A real Redis stopped, paused (SIGSTOP) and killed under load, counting every admission per recipient
 * over the whole episode against the documented bound: the store's limit plus one limit from this
 * node's outage store, never a fresh quota once Redis is back (the outage's admissions are written back).
 */
class OutageEpisodesIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  private static final int LIMIT = 15;
  private static final int RECIPIENTS = 8;

  enum Fault { STOP, PAUSE, KILL }

  /** Decides on a few threads, bounded in count and time, counting outcomes per recipient. */
  static final class Load implements AutoCloseable {
    final Map<String, AtomicInteger> admitted = new ConcurrentHashMap<>();
    final AtomicInteger degraded = new AtomicInteger();
    final AtomicInteger storeDecided = new AtomicInteger();
    final AtomicInteger errors = new AtomicInteger();
    private final Thread[] threads = new Thread[3];
    private volatile boolean stop;

    Load(Node node, String prefix) {
      AtomicInteger seq = new AtomicInteger();
      for (int t = 0; t < threads.length; t++) {
        threads[t] = new Thread(() -> {
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
          for (int i = 0; i < 200_000 && !stop && System.nanoTime() < deadline; i++) {
            int n = seq.incrementAndGet();
            String recipient = prefix + (n % RECIPIENTS);
            Node.Reply r = node.decide("{\"recipient\": \"" + recipient + "\", \"content\": \"m" + n + "\"}");
            if (r.status() != 200) {
              errors.incrementAndGet();
              pause();
              continue;
            }
            (r.degraded() ? degraded : storeDecided).incrementAndGet();
            if (r.allowed()) {
              admitted.computeIfAbsent(recipient, k -> new AtomicInteger()).incrementAndGet();
            }
          }
        }, "episode-load-" + t);
        threads[t].start();
      }
    }

    private static void pause() {
      try {
        Thread.sleep(5); // a client honouring Retry-After would wait longer; keep the episode short
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /**
     * Ends the load and checks the episode against the failure policy's bound: every recipient got at
     * most the store's limit plus one limit of this node's outage store, and what the outage store
     * admitted was written back. Returns the admissions per recipient.
     */
    Map<String, Integer> endWithinTheFailurePolicysBound(Node node, String episode) throws InterruptedException {
      close();
      Map<String, Integer> counts = new HashMap<>();
      admitted.forEach((r, n) -> counts.put(r, n.get()));
      System.out.printf("%s: admitted per recipient %s (limit %d; store decided %d, degraded %d, errors %d, "
          + "written back %d, late released %d)%n", episode, counts, LIMIT, storeDecided.get(), degraded.get(),
          errors.get(), node.server.failover().writtenBack(), node.server.failover().lateReleases());
      assertThat(counts).hasSize(RECIPIENTS);
      assertThat(counts.values()).as("the store's limit plus one limit of this node's outage store")
          .allMatch(n -> n <= 2 * LIMIT);
      assertThat(node.server.failover().writtenBack()).isPositive();
      return counts;
    }

    /**
     * The store's count for {@code recipient} after the episode, once the store refused it (no fresh
     * quota: the store counts what the outage store admitted) without the failure policy.
     */
    static long usedAfterTheEpisode(Node node, String recipient) {
      Node.Reply after = node.decide("{\"recipient\": \"" + recipient + "\", \"content\": \"after\"}");
      assertThat(after.degraded()).isFalse();
      assertThat(after.allowed()).as("no fresh quota after the episode: %s", recipient).isFalse();
      return node.get("/v1/recipients/" + recipient).body().get("counters").get(0).get("used").asLong();
    }

    @Override
    public void close() throws InterruptedException {
      stop = true;
      for (Thread t : threads) {
        t.join(30_000);
      }
    }
  }

  static void await(String what, BooleanSupplier condition) {
    Awaitility.await(what).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).pollInSameThread()
        .until(condition::getAsBoolean);
  }

  @Test
  void stopped() throws Exception {
    episode(Fault.STOP);
  }

  @Test
  void paused() throws Exception {
    episode(Fault.PAUSE);
  }

  @Test
  void killed() throws Exception {
    episode(Fault.KILL);
  }

  private void episode(Fault fault) throws Exception {
    RedisServer redis = REDIS.deployment().servers().get(0);
    Path seed = Files.createTempFile("fcap-episode", ".yaml");
    Files.writeString(seed, """
        policies:
          - tenant: default
            rules:
              - {id: per-hour, limit: 15, window: 1h, key: [recipient]}
        """);
    String name = fault.name().toLowerCase();
    Map<String, String> settings = Map.of("store.timeout", "200ms", "failure.window", "500ms",
        "failure.probeInterval", "100ms", "rules.seed", seed.toString());
    try (Node node = Node.onRedis(REDIS.uri(), name + ":rules", name + ":audit", settings);
        Load load = new Load(node, name + "-r")) {
      await("decisions on Redis", () -> load.storeDecided.get() > 100);
      switch (fault) {
        case STOP -> redis.stop();
        case PAUSE -> redis.pause();
        case KILL -> redis.kill();
      }
      await("degraded decisions", () -> load.degraded.get() > 100);
      assertThat(node.server.failover().down()).isTrue();
      switch (fault) {
        case STOP, KILL -> redis.restart();
        case PAUSE -> redis.resume();
      }
      await("recovery", () -> !node.server.failover().down());
      int back = load.storeDecided.get();
      await("decisions on Redis again", () -> load.storeDecided.get() > back + 100);
      Map<String, Integer> counts = load.endWithinTheFailurePolicysBound(node, fault.name());
      for (String r : counts.keySet()) {
        long used = Load.usedAfterTheEpisode(node, r);
        if (fault == Fault.PAUSE) {
          assertThat(used).as("Redis kept its data: it counts every admission of %s", r)
              .isGreaterThanOrEqualTo(counts.get(r));
        } else {
          assertThat(used).as("the restarted Redis holds at least the limit for %s", r).isGreaterThanOrEqualTo(LIMIT);
        }
      }
    } finally {
      if (fault == Fault.PAUSE) {
        redis.resume();
      }
      if (!redis.isRunning()) {
        redis.restart();
      }
      Files.deleteIfExists(seed);
    }
  }
}
