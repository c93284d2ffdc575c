package dev.fcap.engine;

import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A decision over several partitions (rules keyed without the recipient), decided one partition after
 * another, recipient first. If a later partition refuses or fails, what the earlier ones recorded is
 * released, and the partitions not reached are dry-run so that every rule reports. Under contention
 * that can briefly refuse too much; it never admits too much.
 */
final class PartitionChain {
  private PartitionChain() {}

  /** The answers of {@code requests}, in order (a replayed decision's after the first may be null). */
  static CompletableFuture<PartitionResult[]> decide(Store store, PartitionRequest[] requests, Operation op) {
    return next(store, requests, op, 0, new PartitionResult[requests.length]);
  }

  private static CompletableFuture<PartitionResult[]> next(Store store, PartitionRequest[] requests, Operation op,
      int i, PartitionResult[] results) {
    if (i == requests.length) {
      return CompletableFuture.completedFuture(results);
    }
    return store.apply(requests[i]).exceptionallyCompose(error -> {
      // a later partition failed (unreachable, full): take back what the earlier ones recorded
      List<CompletableFuture<?>> undo = new ArrayList<>();
      for (int j = 0; j < i && op == Operation.DECIDE; j++) {
        undo.add(store.apply(requests[j].asRelease(results[j].time())));
      }
      return CompletableFuture.allOf(undo.toArray(CompletableFuture[]::new))
          .handle((ignored, e) -> (PartitionResult) null)
          .thenCompose(ignored -> CompletableFuture.failedFuture(error));
    }).thenCompose(r -> {
      results[i] = r;
      if (r.replayOf() != null) {
        return CompletableFuture.completedFuture(results); // decided before: the other partitions were counted then
      }
      if (r.allowed() || op != Operation.DECIDE) {
        return next(store, requests, op, i + 1, results);
      }
      List<CompletableFuture<?>> pending = new ArrayList<>();
      for (int j = 0; j < i; j++) {
        pending.add(store.apply(requests[j].asRelease(results[j].time())));
      }
      for (int j = i + 1; j < requests.length; j++) {
        int at = j;
        pending.add(store.apply(requests[j].asCheck()).thenAccept(checked -> results[at] = checked));
      }
      return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).thenApply(ignored -> results);
    });
  }
}
