package dev.fcap.cli;

import dev.fcap.engine.Engine;
import dev.fcap.model.Dimension;
import dev.fcap.model.InvalidMessageException;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Decides a batch of replay rows, each at its own timestamp, with the same answers as deciding them
 * one by one in log order.
 *
 * <p>When every rule is keyed by the recipient (a send window counts nothing, so it never ties two
 * recipients together), rows of different recipients never touch the same counters, so only the
 * order within a recipient matters: the batch is then split into {@link #BUCKETS} buckets by a
 * hash of the recipient, and two threads (the caller and a second one) take buckets in turn until
 * none is left, each deciding its bucket's rows in log order. Taking
 * buckets rather than a fixed half balances the two: the caller first does the previous batch's
 * output (the summary, the decisions file), which {@link #decide} runs while the second thread is
 * already deciding, and then joins in for what is left; the batch ends when both are done, so a
 * recipient's rows of the next batch never start before those of this one. With any rule keyed
 * without the recipient (per sender, per channel), rows are decided on one thread, after the output.
 * {@code -Dfcap.replay.oneThread=true} forces one thread (to compare).
 *
 * <p>On a store where each decision waits on a round trip (Redis), the same independence is used the
 * other way: every recipient's rows of the batch form a chain, each row sent when the one before it
 * is answered, and all chains are in flight at once (the store's client pipelines them), while the
 * caller writes the previous batch's output. Deciding row by row, each on its own round trip, a
 * replay on Redis did about 10,000 rows/s.
 *
 * <p>On the embedded store a decision mostly waits for memory: its recipient's table slot, then the
 * record it points to, each a cache miss among millions of partitions. A thread therefore hands the
 * store the partitions of its next {@link #AHEAD} rows first ({@link Engine#prefetch}), which reads
 * them all at once, so that their misses overlap; the rows are then decided one by one from the
 * caches (docs/benchmarks.md, "Embedded engine": the memory floor).
 *
 * <p>The deciders run at their own rows' times, which can be hours apart within a batch; the store
 * must not expire one bucket's counters by another's time. So after each batch the replay raises the
 * store's caller-time floor ({@link dev.fcap.store.Store#advanceCallerTimeFloor}) to
 * {@link #progress()}, the time of the bucket furthest behind: rows after it in the log are not
 * earlier (in a log sorted by time; an unsorted log is a clock going back, see docs/algorithms.md).
 */
final class BatchDecider implements AutoCloseable {
  /** Buckets per batch when split: enough for the two threads to even out, few enough to scan cheaply. */
  static final int BUCKETS = 8;
  /** Rows whose partitions are handed to the store together before they are decided ({@link Engine#prefetch}). */
  static final int AHEAD = dev.fcap.store.memory.MemoryStore.AHEAD;
  private final Engine engine;
  private final ExecutorService second;
  /** The time of the last row decided per bucket (one bucket when not split). */
  private final long[] progress;
  /** Words of 64 rules per row in a batch's verdicts. */
  private final int words;
  /** Rows decided as per-recipient chains in flight at once (a store of round trips), not on threads. */
  private final boolean chains;

  /** {@code roundTrips}: every decision waits on a round trip to the store (not the embedded one). */
  BatchDecider(Engine engine, List<Policy> policies, boolean roundTrips) {
    this.engine = engine;
    boolean independent = everyRuleKeyedByRecipient(policies) && !Boolean.getBoolean("fcap.replay.oneThread");
    this.chains = independent && roundTrips;
    boolean split = independent && !roundTrips && Runtime.getRuntime().availableProcessors() > 1;
    this.second = split
        ? Executors.newSingleThreadExecutor(r -> {
          Thread t = new Thread(r, "fcap-replay-decider");
          t.setDaemon(true);
          return t;
        })
        : null;
    this.progress = new long[split || chains ? BUCKETS : 1];
    this.words = BatchVerdicts.words(policies);
    java.util.Arrays.fill(progress, Long.MIN_VALUE);
  }

  /**
   * Whether rows of different recipients never share a counter: every rule is keyed by the recipient,
   * or is a send window (it counts nothing and reads only its own row's time and zone).
   */
  static boolean everyRuleKeyedByRecipient(List<Policy> policies) {
    return policies.stream().flatMap(p -> p.rules().stream())
        .allMatch(r -> r.isSendWindow() || r.key().contains(Dimension.RECIPIENT));
  }

  /**
   * The decisions of {@code rows}, in their order; {@code meanwhile} runs first on the calling
   * thread, while the second thread (if any) already decides.
   */
  BatchVerdicts decide(SendLog.Row[] rows, Output meanwhile) throws java.io.IOException {
    requireDeferrable(rows);
    BatchVerdicts out = new BatchVerdicts(rows.length, words);
    if (chains) {
      CompletableFuture<Void> all = decideChains(rows, out);
      try {
        meanwhile.write();
      } finally {
        all.join(); // a failed decision fails the replay, as join() did row by row
      }
      for (int i = 0; i < rows.length; i++) {
        progress[bucketOf(rows[i])] = rows[i].time(); // log order: each bucket's last row stays
      }
      return out;
    }
    if (second == null) {
      meanwhile.write();
      decideBucket(rows, out, null, 0);
      return out;
    }
    int[][] buckets = buckets(rows);
    AtomicInteger next = new AtomicInteger();
    Future<?> other = second.submit(() -> decideBuckets(rows, out, buckets, next));
    try {
      meanwhile.write();
      decideBuckets(rows, out, buckets, next);
    } finally {
      join(other); // even when the output failed: the engine is not closed under a deciding thread
    }
    return out;
  }

  /**
   * A deferred row the engine cannot honour (a store that does not book, a rule that cannot be
   * booked under) stops the replay before the batch is decided, naming its line and why.
   */
  private void requireDeferrable(SendLog.Row[] rows) {
    for (SendLog.Row row : rows) {
      if (row.message().defer() != null) {
        try {
          engine.requireDeferrableAt(row.message(), row.time());
        } catch (InvalidMessageException e) {
          throw new SendLog.BadRowException(row.line(), e.getMessage() + " (column " + e.field() + ")");
        }
      }
    }
  }

  /** Work done on the caller's thread while the second decides. */
  @FunctionalInterface
  interface Output {
    void write() throws java.io.IOException;
  }

  private static void join(Future<?> other) {
    try {
      other.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
    }
  }

  /**
   * Starts every recipient's chain of rows: a row is decided when the one before it (of the same
   * recipient, in log order) is answered. Completes when every row is.
   */
  private CompletableFuture<Void> decideChains(SendLog.Row[] rows, BatchVerdicts out) {
    int[] next = new int[rows.length];
    Map<String, Integer> last = new HashMap<>();
    List<Integer> firsts = new ArrayList<>();
    for (int i = 0; i < rows.length; i++) {
      next[i] = -1;
      Integer before = last.put(rows[i].message().recipient(), i);
      if (before == null) {
        firsts.add(i);
      } else {
        next[before] = i;
      }
    }
    CompletableFuture<?>[] chains = new CompletableFuture<?>[firsts.size()];
    for (int k = 0; k < chains.length; k++) {
      chains[k] = chain(rows, out, next, firsts.get(k));
    }
    return CompletableFuture.allOf(chains);
  }

  private CompletableFuture<Void> chain(SendLog.Row[] rows, BatchVerdicts out, int[] next, int i) {
    return engine.decideAt(rows[i].message(), rows[i].time(), out.recorder().at(i)).thenCompose(admitted -> {
      out.admitted(i, admitted);
      return next[i] < 0 ? CompletableFuture.completedFuture(null) : chain(rows, out, next, next[i]);
    });
  }

  private static int bucketOf(SendLog.Row row) {
    return row.message().recipient().hashCode() & (BUCKETS - 1);
  }

  /** Per bucket, the indexes of its rows in log order (counts first, then one pass to fill). */
  private static int[][] buckets(SendLog.Row[] rows) {
    int[] bucketOf = new int[rows.length];
    int[] sizes = new int[BUCKETS];
    for (int i = 0; i < rows.length; i++) {
      bucketOf[i] = bucketOf(rows[i]);
      sizes[bucketOf[i]]++;
    }
    int[][] buckets = new int[BUCKETS][];
    for (int b = 0; b < BUCKETS; b++) {
      buckets[b] = new int[sizes[b]];
      sizes[b] = 0;
    }
    for (int i = 0; i < rows.length; i++) {
      buckets[bucketOf[i]][sizes[bucketOf[i]]++] = i;
    }
    return buckets;
  }

  private void decideBuckets(SendLog.Row[] rows, BatchVerdicts out, int[][] buckets, AtomicInteger next) {
    for (int b = next.getAndIncrement(); b < BUCKETS; b = next.getAndIncrement()) {
      decideBucket(rows, out, buckets[b], b);
    }
  }

  /**
   * The time of the last row decided by the bucket furthest behind (Long.MIN_VALUE before each has
   * decided one); read between batches.
   */
  long progress() {
    long min = Long.MAX_VALUE;
    for (long p : progress) {
      min = Math.min(min, p);
    }
    return min;
  }

  /** Decides the rows of one bucket ({@code indexes} null: every row), in log order. */
  private void decideBucket(SendLog.Row[] rows, BatchVerdicts out, int[] indexes, int bucket) {
    BatchVerdicts.Recorder recorder = out.recorder(); // rows decided one after the other: one for all
    int n = indexes == null ? rows.length : indexes.length;
    Message[] ahead = new Message[AHEAD];
    for (int k = 0; k < n; k++) {
      if (k % AHEAD == 0) { // the next rows' partitions read together, before any of them is decided
        int next = Math.min(AHEAD, n - k);
        for (int j = 0; j < next; j++) {
          ahead[j] = rows[indexes == null ? k + j : indexes[k + j]].message();
        }
        engine.prefetch(ahead, 0, next);
      }
      int i = indexes == null ? k : indexes[k];
      out.admitted(i, engine.decideAt(rows[i].message(), rows[i].time(), recorder.at(i)).join());
    }
    if (n > 0) {
      progress[bucket] = rows[indexes == null ? n - 1 : indexes[n - 1]].time();
    }
  }

  @Override
  public void close() {
    if (second != null) {
      second.shutdownNow();
    }
  }
}
