package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.ForwardingStore;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a store of round trips the replay keeps every recipient's rows of a batch in flight as a chain
 * ({@link BatchDecider}). On Redis a client that sends in call order would hide a replay that lets a
 * recipient's rows overtake each other, so here the store applies each request after a random delay,
 * on four threads: requests in flight together run in any order. The decisions must still be those of
 * deciding row by row on one thread ({@link ReplayVerdictsTest#reference}), on the adversarial log
 * of {@link ReplayOracleTest} (bursts of one recipient's rows in the same millisecond).
 */
class ReplayChainsTest {
  @TempDir Path dir;

  @Test
  void chainsInFlightOnAStoreThatAnswersInAnyOrderDecideAsRowByRow() throws Exception {
    Path log = ReplayOracleTest.adversarialLog(dir.resolve("log.csv"), 5, 8_000);
    List<Policy> policies = PolicyParser.parseFile(ReplayOracleTest.SEED);
    List<String> expected = ReplayVerdictsTest.reference(policies, log).lines();
    assertThat(expected).anyMatch(l -> l.startsWith("false,"));
    ReplayCommand.ReplayClock clock = new ReplayCommand.ReplayClock();
    ScheduledExecutorService later = Executors.newScheduledThreadPool(4);
    Path out = dir.resolve("decisions.txt");
    try (Store store = new AnyOrder(MemoryStore.builder().clock(clock).build(), later);
        Engine engine = Engine.builder(store).clock(clock).callerTime(true).releaseHorizon(java.time.Duration.ZERO)
            .policies(policies).build();
        BatchDecider decider = new BatchDecider(engine, policies, true);
        DecisionsFile file = new DecisionsFile(out, policies);
        SendLog rows = new SendLog(Files.newBufferedReader(log, StandardCharsets.UTF_8))) {
      for (SendLog.Row[] batch = next(rows); batch.length > 0; batch = next(rows)) {
        clock.time = batch[batch.length - 1].time();
        BatchVerdicts decided = decider.decide(batch, () -> { });
        store.advanceCallerTimeFloor(decider.progress());
        for (int i = 0; i < batch.length; i++) {
          file.write(batch[i].message().tenant(), decided, i);
        }
      }
    } finally {
      later.shutdownNow();
    }
    assertThat(ReplayOracleTest.mismatches(Files.readAllLines(out), expected)).isEmpty();
  }

  private static SendLog.Row[] next(SendLog rows) throws IOException {
    List<SendLog.Row> batch = new ArrayList<>();
    SendLog.Row r;
    while (batch.size() < 1024 && (r = rows.next()) != null) {
      batch.add(r);
    }
    return batch.toArray(SendLog.Row[]::new);
  }

  /** Applies each request after 0-2 ms on one of several threads: those in flight together run in any order. */
  private static final class AnyOrder extends ForwardingStore {
    private final ScheduledExecutorService later;
    private final SplittableRandom random = new SplittableRandom(7);

    AnyOrder(Store delegate, ScheduledExecutorService later) {
      super(delegate);
      this.later = later;
    }

    @Override
    public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
      long delay;
      synchronized (random) {
        delay = random.nextLong(2_000);
      }
      CompletableFuture<PartitionResult> answer = new CompletableFuture<>();
      later.schedule(() -> delegate().apply(request).whenComplete((r, e) -> {
        if (e != null) {
          answer.completeExceptionally(e);
        } else {
          answer.complete(r);
        }
      }), delay, TimeUnit.MICROSECONDS);
      return answer;
    }
  }
}
