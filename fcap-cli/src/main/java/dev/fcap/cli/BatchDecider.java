package dev.fcap.cli;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Policy;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Decides a batch of replay rows, each at its own timestamp, with the same answers as deciding them
 * one by one in log order.
 *
 * <p>When every rule is keyed by the recipient, rows of different recipients never touch the same
 * counters, so only the order within a recipient matters: the batch is then split in two by a hash
 * of the recipient and decided on two threads, each keeping log order for its recipients. With any
 * rule keyed without the recipient (per sender, per channel), rows are decided on one thread.
 * Two deciders pay off where a decision waits on a round trip (Redis); on the embedded store the
 * parser is the bottleneck. {@code -Dfcap.replay.oneThread=true} forces one thread (to compare).
 */
final class BatchDecider implements AutoCloseable {
  private final Engine engine;
  private final ExecutorService second;

  BatchDecider(Engine engine, List<Policy> policies) {
    this.engine = engine;
    boolean split = everyRuleKeyedByRecipient(policies) && !Boolean.getBoolean("fcap.replay.oneThread")
        && Runtime.getRuntime().availableProcessors() > 1;
    this.second = split
        ? Executors.newSingleThreadExecutor(r -> {
          Thread t = new Thread(r, "fcap-replay-decider");
          t.setDaemon(true);
          return t;
        })
        : null;
  }

  static boolean everyRuleKeyedByRecipient(List<Policy> policies) {
    return policies.stream().flatMap(p -> p.rules().stream()).allMatch(r -> r.key().contains(Dimension.RECIPIENT));
  }

  /** The decisions of {@code rows}, in their order. */
  Decision[] decide(SendLog.Row[] rows) {
    Decision[] out = new Decision[rows.length];
    if (second == null) {
      decideShard(rows, out, -1);
      return out;
    }
    Future<?> other = second.submit(() -> decideShard(rows, out, 1));
    decideShard(rows, out, 0);
    try {
      other.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
    }
    return out;
  }

  /** Decides the rows of one shard (0 or 1 by recipient hash; -1: every row), in log order. */
  private void decideShard(SendLog.Row[] rows, Decision[] out, int shard) {
    for (int i = 0; i < rows.length; i++) {
      SendLog.Row row = rows[i];
      if (shard < 0 || (row.message().recipient().hashCode() & 1) == shard) {
        out[i] = engine.decideAt(row.message(), row.time()).join();
      }
    }
  }

  @Override
  public void close() {
    if (second != null) {
      second.shutdownNow();
    }
  }
}
