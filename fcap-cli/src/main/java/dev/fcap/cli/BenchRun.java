package dev.fcap.cli;

import dev.fcap.cli.BenchSender.Reply;
import java.io.PrintWriter;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One run of {@code fcap bench}: the closed loop ({@code --concurrency} requests in flight) or the
 * open one ({@code --rate}), each request's latency kept, and the counts of what came back.
 */
final class BenchRun {
  private final Double rate;
  private final int concurrency;
  private final int maxRequests;
  private final int batch;
  private final PrintWriter err;

  BenchRun(BenchCommand o, PrintWriter err) {
    this.rate = o.rate;
    this.concurrency = o.concurrency;
    this.maxRequests = o.maxRequests;
    this.batch = o.batch;
    this.err = err;
  }

  /** Counts of one run. */
  static final class Result {
    final AtomicInteger sent = new AtomicInteger();
    final AtomicInteger done = new AtomicInteger();
    final AtomicLong decisions = new AtomicLong();
    final AtomicLong allowed = new AtomicLong();
    final AtomicInteger errors = new AtomicInteger();
    final AtomicLong degraded = new AtomicLong();
    final AtomicLong itemErrors = new AtomicLong();
    volatile String firstError;
    /** Open loop: how late each request was sent after its scheduled instant (ns); null in closed loop. */
    long[] lateness;
    long nanos;
    long serverCpu = -1;
    long ownCpu;
  }

  /**
   * Sends for {@code durationMs} or {@code limit} requests, whichever comes first; each request's
   * latency goes to {@code latencies} (null: not kept, as in the warm-up).
   */
  Result run(BenchSender sender, long durationMs, int limit, long[] latencies, long seedBase)
      throws InterruptedException {
    if (rate != null) {
      return paced(sender, durationMs, limit, latencies, seedBase);
    }
    Result r = new Result();
    long start = System.nanoTime();
    long deadline = start + TimeUnit.MILLISECONDS.toNanos(durationMs);
    CountDownLatch finished = new CountDownLatch(concurrency);
    for (int c = 0; c < concurrency; c++) {
      SplittableRandom rnd = new SplittableRandom(seedBase * 31 + c);
      next(sender, r, rnd, deadline, limit, latencies, finished);
    }
    if (!finished.await(durationMs + 60_000, TimeUnit.MILLISECONDS)) {
      err.println("fcap bench: requests still outstanding after the run; stopping");
    }
    r.nanos = System.nanoTime() - start;
    return r;
  }

  /**
   * Open loop: one pacing thread sends request i at {@code start + i / rate}, without waiting for
   * earlier answers, so a slow answer cannot delay the requests after it (closed loop, a slow answer
   * holds its slot, and the requests it delays are never sent: coordinated omission). A request is
   * sent late only when {@code --concurrency} are in flight or the pacing thread got no CPU; its
   * lateness is recorded, and its latency counts from its scheduled instant.
   */
  private Result paced(BenchSender sender, long durationMs, int limit, long[] latencies, long seedBase)
      throws InterruptedException {
    Result r = new Result();
    long interval = Math.max(1, (long) (1e9 / rate));
    // the warm-up has no request limit of its own: --requests bounds it too (one lateness slot per request)
    int planned = (int) Math.min(Math.min(limit, maxRequests), durationMs * 1_000_000 / interval);
    r.lateness = new long[planned];
    Semaphore inFlight = new Semaphore(concurrency);
    SplittableRandom rnd = new SplittableRandom(seedBase * 31);
    long start = System.nanoTime();
    for (int i = 0; i < planned; i++) {
      long at = start + i * interval;
      long wait;
      while ((wait = at - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait > 200_000 ? wait - 100_000 : Math.max(1, wait / 2));
      }
      inFlight.acquire();
      r.lateness[i] = System.nanoTime() - at;
      int slot = i;
      r.sent.incrementAndGet();
      sender.send(rnd, reply -> {
        if (latencies != null && slot < latencies.length) {
          latencies[slot] = System.nanoTime() - at;
        }
        count(r, reply);
        inFlight.release();
      });
    }
    if (!inFlight.tryAcquire(concurrency, 60, TimeUnit.SECONDS)) {
      err.println("fcap bench: requests still outstanding after the run; stopping");
    }
    r.nanos = System.nanoTime() - start;
    return r;
  }

  private void count(Result r, Reply reply) {
    r.done.incrementAndGet();
    if (reply.error() != null) {
      r.errors.incrementAndGet();
      if (r.firstError == null) {
        r.firstError = reply.error();
      }
    } else {
      r.decisions.addAndGet(batch - reply.itemErrors());
      r.allowed.addAndGet(reply.allowed());
      r.degraded.addAndGet(reply.degraded());
      r.itemErrors.addAndGet(reply.itemErrors());
    }
  }

  private void next(BenchSender sender, Result r, SplittableRandom rnd, long deadline, int limit, long[] latencies,
      CountDownLatch finished) {
    int slot = r.sent.getAndIncrement();
    if (slot >= limit || System.nanoTime() >= deadline) {
      finished.countDown();
      return;
    }
    long t0 = System.nanoTime();
    sender.send(rnd, reply -> {
      long t = System.nanoTime() - t0;
      if (latencies != null) {
        latencies[slot] = t;
      }
      count(r, reply);
      next(sender, r, rnd, deadline, limit, latencies, finished);
    });
  }
}
