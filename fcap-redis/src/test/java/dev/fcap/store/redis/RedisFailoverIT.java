package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.StoreException;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisExtension;
import dev.fcap.store.redis.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Outages under load: every failure during the outage is a typed StoreException, and the store
 * decides again by itself once Redis is back (restarted, or failed over by Sentinel).
 */
class RedisFailoverIT {
  @RegisterExtension
  static final RedisExtension STANDALONE = RedisExtension.standalone();

  @RegisterExtension
  static final RedisExtension SENTINEL = RedisExtension.sentinel();

  private static final Policy POLICY = new Policy("default", 1,
      List.of(Rule.of("per-minute", 1_000_000, Duration.ofMinutes(1), Dimension.RECIPIENT)));

  /** Decides in a bounded loop on another thread, counting outcomes by kind. */
  private static final class Load implements AutoCloseable {
    final Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    final AtomicInteger untyped = new AtomicInteger();
    private final Thread thread;
    private volatile boolean stop;

    Load(Engine engine) {
      thread = new Thread(() -> {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        for (int i = 0; i < 2_000_000 && !stop && System.nanoTime() < deadline; i++) {
          try {
            engine.decide(Message.builder("load" + (i % 100)).build()).join();
            count("ok");
          } catch (CompletionException e) {
            if (e.getCause() instanceof StoreException se) {
              count(se.reason().name());
            } else {
              untyped.incrementAndGet();
            }
          }
        }
      }, "failover-load");
      thread.start();
    }

    void count(String kind) {
      outcomes.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
    }

    int get(String kind) {
      AtomicInteger n = outcomes.get(kind);
      return n == null ? 0 : n.get();
    }

    @Override
    public void close() throws InterruptedException {
      stop = true;
      thread.join(30_000);
    }
  }

  private static void awaitDecisions(Engine engine) throws Exception {
    RedisDeployment.awaitCondition(() -> {
      try {
        return engine.decide(Message.builder("probe").build()).join().allowed();
      } catch (CompletionException e) {
        return false;
      }
    }, "the store to decide again");
  }

  private static void awaitMore(Load load, String kind, int than) throws Exception {
    RedisDeployment.awaitCondition(() -> load.get(kind) > than, "more '" + kind + "' outcomes: " + load.outcomes);
  }

  @Test
  void standaloneStopAndRestartUnderLoad() throws Exception {
    RedisServer server = STANDALONE.deployment().servers().get(0);
    try (RedisStore store = RedisStore.builder(STANDALONE.uri()).commandTimeout(Duration.ofMillis(500)).build();
        Engine engine = Engine.builder(store).policy(POLICY).build();
        Load load = new Load(engine)) {
      awaitMore(load, "ok", 200);
      server.stop();
      awaitMore(load, "UNAVAILABLE", 50);
      int okDuringOutage = load.get("ok");
      server.restart();
      awaitMore(load, "ok", okDuringOutage + 200);
      awaitDecisions(engine);
      assertThat(load.untyped.get()).as("untyped failures; outcomes %s", load.outcomes).isZero();
      Decision d = engine.decide(Message.builder("after").build()).join();
      assertThat(d.allowed()).isTrue();
    }
  }

  @Test
  void sentinelFailsOverToTheReplicaUnderLoad() throws Exception {
    RedisDeployment deployment = SENTINEL.deployment();
    RedisServer master = deployment.servers().get(0);
    RedisServer replica = deployment.servers().get(1);
    try (RedisStore store = RedisStore.builder(SENTINEL.uri()).commandTimeout(Duration.ofMillis(500)).build();
        Engine engine = Engine.builder(store).policy(POLICY).build();
        Load load = new Load(engine)) {
      awaitMore(load, "ok", 200);
      master.kill();
      awaitMore(load, "UNAVAILABLE", 10);
      RedisDeployment.awaitCondition(() -> "master".equals(replica.info("replication", "role")),
          "sentinel to promote the replica");
      int ok = load.get("ok");
      awaitMore(load, "ok", ok + 200);
      awaitDecisions(engine);
      assertThat(load.untyped.get()).as("untyped failures; outcomes %s", load.outcomes).isZero();
      assertThat(replica.call("DBSIZE")).as("decisions land on the promoted replica").isNotEqualTo(0L);
    }
  }
}
