package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.Store;
import dev.fcap.store.redis.testing.RedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Many threads on many connections (several stores, so several Lettuce clients) decide for ONE
 * recipient at once, singly and in pipelined batches: exactly the limit is admitted, never more.
 */
class RedisConcurrencyIT {
  @RegisterExtension
  static final RedisExtension STANDALONE = RedisExtension.standalone();

  @RegisterExtension
  static final RedisExtension CLUSTER = RedisExtension.cluster();

  private static final Policy POLICY = new Policy("default", 1, List.of(
      Rule.of("per-hour", 100, Duration.ofHours(1), Dimension.RECIPIENT),
      Rule.of("same-content", 1000, Duration.ofHours(1), Dimension.RECIPIENT, Dimension.CONTENT)));

  @Test
  void standaloneAdmitsExactlyTheLimit() throws Exception {
    STANDALONE.deployment().flushAll();
    assertThat(admitted(STANDALONE.uri())).isEqualTo(100);
  }

  @Test
  void clusterAdmitsExactlyTheLimit() throws Exception {
    CLUSTER.deployment().flushAll();
    assertThat(admitted(CLUSTER.uri())).isEqualTo(100);
  }

  /** The grouped layout: two hot recipients in ONE hash, each its own limit exactly. */
  @Test
  void groupedAdmitsExactlyTheLimitOfEachRecipientOfAGroup() throws Exception {
    STANDALONE.deployment().flushAll();
    java.util.Map<String, AtomicInteger> byRecipient = new java.util.concurrent.ConcurrentHashMap<>();
    assertThat(admitted(STANDALONE.uri(), 1, 2, byRecipient)).isEqualTo(200);
    assertThat(byRecipient).containsOnlyKeys("hot0", "hot1");
    assertThat(byRecipient.values()).extracting(AtomicInteger::get).containsExactly(100, 100);
  }

  private static int admitted(String uri) throws Exception {
    return admitted(uri, 0, 1, new java.util.concurrent.ConcurrentHashMap<>());
  }

  /** Decisions from 16 threads on 4 stores, recipient {@code "hot" + thread % recipients}; how many were admitted. */
  private static int admitted(String uri, int groups, int recipients, java.util.Map<String, AtomicInteger> byRecipient)
      throws Exception {
    int stores = 4;
    int threads = 16;
    List<RedisStore> opened = new ArrayList<>();
    List<Engine> engines = new ArrayList<>();
    for (int i = 0; i < stores; i++) {
      RedisStore store = RedisStore.builder(uri).groups(groups).build();
      opened.add(store);
      engines.add(Engine.builder(store).policy(POLICY).build());
    }
    AtomicInteger admitted = new AtomicInteger();
    AtomicInteger decided = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Engine engine = engines.get(t % stores);
        int thread = t;
        String recipient = recipients == 1 ? "hot" : "hot" + (t / 2 % recipients); // singles and batches on each
        done.add(pool.submit(() -> {
          for (int i = 0; i < 25; i++) {
            if (thread % 2 == 0) {
              Decision d = engine.decide(Message.builder(recipient).content(thread + "/" + i).build()).join();
              decided.incrementAndGet();
              if (d.allowed()) {
                admitted.incrementAndGet();
                byRecipient.computeIfAbsent(recipient, r -> new AtomicInteger()).incrementAndGet();
              }
            } else {
              List<Message> batch = new ArrayList<>();
              for (int j = 0; j < 4; j++) {
                batch.add(Message.builder(recipient).content(thread + "/" + i + "/" + j).build());
              }
              for (Decision d : Store.all(engine.decideAll(batch, false)).join()) {
                decided.incrementAndGet();
                if (d.allowed()) {
                  admitted.incrementAndGet();
                  byRecipient.computeIfAbsent(recipient, r -> new AtomicInteger()).incrementAndGet();
                }
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
      opened.forEach(RedisStore::close);
    }
    assertThat(decided.get()).isEqualTo(8 * 25 + 8 * 25 * 4);
    return admitted.get();
  }
}
