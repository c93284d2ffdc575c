package dev.fcap.engine;

import dev.fcap.store.Booking;
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
 *
 * <p><b>Bookings.</b> A deferred message is booked at one instant in every partition, which no single
 * step can find: each partition's step books at the earliest instant its own counters admit from a
 * lower bound x ({@link Booking#from}). The partitions are asked in order from the decision's time;
 * one that answers later than x moves x there, and everything this round recorded is released and
 * asked again from the new x, until every partition in a row has booked at x (or admitted now, all of
 * them): each answer is the earliest its partition admits from x, so x only grows, and the first x
 * they all admit is the earliest instant every rule admits. Rounds are bounded ({@link #MAX_ROUNDS}):
 * a decision that needs more is refused, and nothing it recorded stays.
 */
final class PartitionChain {
  /**
   * The most rounds a booking over several partitions asks: each moves x past a full window of some
   * partition, and a deferral that finds that many in a row is refused rather than hold its caller.
   */
  static final int MAX_ROUNDS = 16;
  /** The lower bound of a round in which every partition so far admitted the message now. */
  private static final long NOW = Long.MIN_VALUE;

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
    return store.apply(requests[i]).exceptionallyCompose(error ->
        // a later partition failed (unreachable, full): take back what the earlier ones recorded
        (op == Operation.DECIDE ? release(store, requests, results, i) : CompletableFuture.completedFuture(null))
            .handle((ignored, e) -> (PartitionResult) null)
            .thenCompose(ignored -> CompletableFuture.failedFuture(error))
    ).thenCompose(r -> {
      results[i] = r;
      if (r.replayOf() != null) {
        return CompletableFuture.completedFuture(results); // decided before: the other partitions were counted then
      }
      if (r.allowed() || op != Operation.DECIDE) {
        return next(store, requests, op, i + 1, results);
      }
      return CompletableFuture.allOf(release(store, requests, results, i), dryRuns(store, requests, results, i + 1, -1))
          .thenApply(ignored -> results);
    });
  }

  /**
   * The answers of {@code requests} for a message deferred as {@code booking}: all admitted now, or
   * all booked at one instant (their {@link PartitionResult#bookedAt}), or refused with nothing kept.
   */
  static CompletableFuture<PartitionResult[]> book(Store store, PartitionRequest[] requests, Booking booking) {
    return bookFrom(store, requests, booking, 0, NOW, 1, new PartitionResult[requests.length]);
  }

  private static CompletableFuture<PartitionResult[]> bookFrom(Store store, PartitionRequest[] requests,
      Booking booking, int i, long x, int round, PartitionResult[] results) {
    if (i == requests.length) {
      return CompletableFuture.completedFuture(results);
    }
    Booking asked = x == NOW ? booking : booking.from(x);
    if (asked == null) {
      return refuse(store, requests, results, i, -1);
    }
    return store.apply(requests[i].withBooking(asked)).exceptionallyCompose(error ->
        release(store, requests, results, i).handle((ignored, e) -> (PartitionResult) null)
            .thenCompose(ignored -> CompletableFuture.failedFuture(error))
    ).thenCompose(r -> {
      results[i] = r;
      if (r.replayOf() != null) {
        return CompletableFuture.completedFuture(results); // decided before: the other partitions were counted then
      }
      long at = r.allowed() ? NOW : r.bookedAt();
      if (!r.allowed() && at == 0) {
        return refuse(store, requests, results, i, i); // no instant by notAfter here: nowhere
      }
      if (i == 0 || at == x) {
        return bookFrom(store, requests, booking, i + 1, i == 0 ? at : x, round, results);
      }
      // later than the partitions before it: all of this round asked again from there
      if (round == MAX_ROUNDS) {
        return refuse(store, requests, results, i + 1, -1);
      }
      return release(store, requests, results, i + 1)
          .thenCompose(ignored -> bookFrom(store, requests, booking, 0, at, round + 1, results));
    });
  }

  /** Releases what {@code results[0, n)} recorded: an admission at its time, a booking at its instant. */
  private static CompletableFuture<Void> release(Store store, PartitionRequest[] requests, PartitionResult[] results,
      int n) {
    List<CompletableFuture<?>> undo = new ArrayList<>(n);
    for (int j = 0; j < n; j++) {
      PartitionResult r = results[j];
      if (r != null && (r.allowed() || r.bookedAt() != 0)) {
        undo.add(store.apply(requests[j].asRelease(r.allowed() ? r.time() : r.bookedAt())));
      }
    }
    return CompletableFuture.allOf(undo.toArray(CompletableFuture[]::new));
  }

  /**
   * A refused deferral: what {@code results[0, recorded)} recorded is released, and every partition
   * but {@code refusing} (whose answer is kept; -1: none) is dry-run, so that every rule reports.
   */
  private static CompletableFuture<PartitionResult[]> refuse(Store store, PartitionRequest[] requests,
      PartitionResult[] results, int recorded, int refusing) {
    return release(store, requests, results, recorded)
        .thenCompose(ignored -> dryRuns(store, requests, results, 0, refusing))
        .thenApply(ignored -> results);
  }

  /** Dry-runs {@code requests[from, n)} but {@code skip} (-1: none) into their {@code results}. */
  private static CompletableFuture<Void> dryRuns(Store store, PartitionRequest[] requests, PartitionResult[] results,
      int from, int skip) {
    List<CompletableFuture<?>> checks = new ArrayList<>(requests.length);
    for (int j = from; j < requests.length; j++) {
      int at = j;
      if (j != skip) {
        checks.add(store.apply(dryRun(requests[j])).thenAccept(checked -> results[at] = checked));
      }
    }
    return CompletableFuture.allOf(checks.toArray(CompletableFuture[]::new));
  }

  /**
   * {@code request} as a dry run that reports its rules now: without its record, which a partition
   * may still remember from an earlier decision under the same message id (the recipient's partition
   * reset since, or the record of a decision this chain released), and would answer instead.
   */
  private static PartitionRequest dryRun(PartitionRequest request) {
    return request.asCheck().withIdempotency(null);
  }
}
