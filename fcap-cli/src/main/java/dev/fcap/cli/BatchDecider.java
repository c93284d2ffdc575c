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
 *
 * <p>The two threads run at their own rows' times, which can be hours apart within a batch; the
 * store must not expire one thread's counters by the other's time. So after each batch the replay
 * raises the store's caller-time floor ({@link dev.fcap.store.Store#advanceCallerTimeFloor}) to
 * {@link #progress()}, the time of the slower decider: rows after it in the log are not earlier
 * (in a log sorted by time; an unsorted log is a clock going back, see docs/algorithms.md).
 */
final class BatchDecider implements AutoCloseable {
  private final Engine engine;
  private final ExecutorService second;
  /** The time of the last row decided per shard (one shard when not split). */
  private final long[] progress;

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
    this.progress = new long[split ? 2 : 1];
    java.util.Arrays.fill(progress, Long.MIN_VALUE);
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

  /**
   * The time of the last row decided by the slower decider (Long.MIN_VALUE before each has decided
   * one); read between batches.
   */
  long progress() {
    long min = Long.MAX_VALUE;
    for (long p : progress) {
      min = Math.min(min, p);
    }
    return min;
  }

  /** Decides the rows of one shard (0 or 1 by recipient hash; -1: every row), in log order. */
  private void decideShard(SendLog.Row[] rows, Decision[] out, int shard) {
    long last = Long.MIN_VALUE;
    for (int i = 0; i < rows.length; i++) {
      SendLog.Row row = rows[i];
      if (shard < 0 || (row.message().recipient().hashCode() & 1) == shard) {
        out[i] = engine.decideAt(row.message(), row.time()).join();
        last = row.time();
      }
    }
    if (last != Long.MIN_VALUE) {
      progress[Math.max(shard, 0)] = last;
    }
  }

  @Override
  public void close() {
    if (second != null) {
      second.shutdownNow();
    }
  }
}
