package dev.fcap.server.failure;

import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Supplier;

/**
 * The deadline of every call to the store ({@code store.timeout}): a call that misses it fails as
 * {@link Reason#TIMEOUT}, and every answer or failure is told to the {@link Health} state.
 */
final class Deadlines {
  private final Store delegate;
  private final Scheduler scheduler;
  private final Executor delivery;
  private final long timeoutMs;
  private final Health health;

  Deadlines(Store delegate, Scheduler scheduler, Executor delivery, long timeoutMs, Health health) {
    this.delegate = delegate;
    this.scheduler = scheduler;
    this.delivery = delivery;
    this.timeoutMs = timeoutMs;
    this.health = health;
  }

  /** What to do with an answer that came after its deadline. */
  @FunctionalInterface
  interface Late<T> {
    void arrived(int index, T value);
  }

  /**
   * Completes {@code out[i]} from {@code sent[i]}, or with TIMEOUT if the call does not answer within
   * the deadline (one timer for the whole call, none if it already answered). Feeds the health state.
   *
   * <p>An answer is taken when it arrives (a cheap CAS on the client's thread), and the answers of a
   * call of several requests are handed on together on the delivery executor once every request of
   * the call is settled: the work they trigger downstream (decisions, responses) must not run on the
   * client's I/O thread ahead of the answers still to be read there, or the deadline would measure
   * this server's own work instead of the store.
   */
  <T> void settleWithin(List<CompletableFuture<T>> sent, List<CompletableFuture<T>> out, Late<T> late) {
    int n = sent.size();
    boolean done = sent.stream().allMatch(CompletableFuture::isDone);
    AtomicIntegerArray fate = new AtomicIntegerArray(n); // 0 waiting, 1 answered, 2 missed the deadline
    Object[] values = new Object[n];
    Throwable[] errors = new Throwable[n];
    AtomicInteger settled = new AtomicInteger();
    Runnable deliver = () -> {
      for (int i = 0; i < n; i++) {
        if (fate.get(i) == 1) {
          if (errors[i] == null) {
            @SuppressWarnings("unchecked")
            T value = (T) values[i];
            out.get(i).complete(value);
          } else {
            out.get(i).completeExceptionally(errors[i]);
          }
        }
      }
    };
    Runnable whenSettled = () -> {
      if (n == 1 || done) {
        deliver.run();
      } else {
        delivery.execute(deliver);
      }
    };
    Runnable cancel = () -> {};
    if (!done) {
      cancel = scheduler.schedule(() -> {
        int missed = 0;
        for (int i = 0; i < n; i++) {
          if (fate.compareAndSet(i, 0, 2)) {
            missed++;
            out.get(i).completeExceptionally(new StoreException(Reason.TIMEOUT,
                "the store did not answer within store.timeout (" + timeoutMs + " ms)"));
          }
        }
        if (missed > 0) {
          health.failed();
          if (settled.addAndGet(missed) == n) {
            whenSettled.run();
          }
        }
      }, timeoutMs);
    }
    Runnable stopTimer = cancel;
    for (int i = 0; i < n; i++) {
      int at = i;
      sent.get(i).whenComplete((value, error) -> {
        StoreException se = error == null ? null : storeException(error);
        if (se == null) {
          health.succeeded();
        }
        if (!fate.compareAndSet(at, 0, 1)) {
          if (se == null) {
            late.arrived(at, value);
          }
          return;
        }
        if (se != null && (se.reason() == Reason.TIMEOUT || se.reason() == Reason.UNAVAILABLE)) {
          health.failed();
        }
        values[at] = value;
        errors[at] = se;
        if (settled.incrementAndGet() == n) {
          stopTimer.run();
          whenSettled.run();
        }
      });
    }
  }

  /** The store's answers to {@code chunk}, one call; a call that throws fails each request. */
  List<CompletableFuture<PartitionResult>> callAll(List<PartitionRequest> chunk) {
    try {
      return delegate.applyAll(chunk);
    } catch (RuntimeException e) {
      return chunk.stream().map(r -> CompletableFuture.<PartitionResult>failedFuture(e)).toList();
    }
  }

  /** The call's future; a call that throws fails it. */
  static <T> CompletableFuture<T> call(Supplier<CompletableFuture<T>> c) {
    try {
      return c.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Whether {@code f} failed with TIMEOUT (its call, or the call before it, missed the deadline). */
  static boolean timedOut(CompletableFuture<?> f) {
    if (!f.isCompletedExceptionally()) {
      return false;
    }
    try {
      f.join();
      return false;
    } catch (CompletionException | CancellationException e) {
      return e.getCause() instanceof StoreException se && se.reason() == Reason.TIMEOUT;
    }
  }

  static StoreException storeException(Throwable error) {
    Throwable t = error;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof StoreException se) {
      return se;
    }
    if (t instanceof TimeoutException) {
      return new StoreException(Reason.TIMEOUT, String.valueOf(t.getMessage()), t);
    }
    throw t instanceof RuntimeException re ? re : new CompletionException(t);
  }

  /** Backpressure: the caller gets a 429, never a local decision. */
  static StoreException busy(String why) {
    return new StoreException(Reason.TIMEOUT, why);
  }
}
