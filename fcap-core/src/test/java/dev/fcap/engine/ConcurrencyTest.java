package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.MemoryStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Many threads on one recipient admit exactly the limit, never more. */
class ConcurrencyTest {

  @Test
  void manyThreadsOnOneRecipientAdmitExactlyTheLimit() throws Exception {
    ManualClock clock = new ManualClock();
    Engine engine = Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock)
        .policies(PolicyParser.parseFile(Path.of("../examples/rules.yaml"))).build();
    int threads = 8;
    int perThread = 500;
    AtomicInteger admitted = new AtomicInteger();
    AtomicInteger others = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      done.add(pool.submit(() -> {
        start.await();
        for (int i = 0; i < perThread; i++) {
          Decision d = engine.decide(Message.builder("+8613900000000").content("t" + thread + "-" + i).build()).join();
          if (d.allowed()) {
            admitted.incrementAndGet();
          }
          // a second recipient interleaved, so the stripes see contention from other keys too
          if (engine.decide(Message.builder("other-" + (i % 50)).content("x" + i).build()).join().allowed()) {
            others.incrementAndGet();
          }
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<?> f : done) {
      f.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    assertThat(admitted.get()).isEqualTo(15);
    assertThat(others.get()).isEqualTo(50 * 15);
    assertThat(engine.inspect("default", "+8613900000000").join().counters())
        .filteredOn(c -> c.ruleId().equals("recipient-per-minute"))
        .singleElement().satisfies(c -> assertThat(c.used()).isEqualTo(15));
  }

  @Test
  void concurrentReleasesOfOneDecisionUndoItOnce() throws Exception {
    ManualClock clock = new ManualClock();
    Engine engine = Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock)
        .policies(PolicyParser.parseFile(Path.of("../examples/rules.yaml"))).build();
    Decision first = engine.decide(Message.builder("r").content("a").build()).join();
    engine.decide(Message.builder("r").content("b").build()).join();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<Boolean>> results = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      results.add(pool.submit(() -> engine.release(first.decisionId()).join()));
    }
    for (Future<Boolean> f : results) {
      assertThat(f.get(10, TimeUnit.SECONDS)).isTrue();
    }
    pool.shutdown();
    Decision next = engine.decide(Message.builder("r").content("c").build()).join();
    assertThat(next.rules().get(0).used()).isEqualTo(1);
  }
}
