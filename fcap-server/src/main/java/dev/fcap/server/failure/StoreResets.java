package dev.fcap.server.failure;

import dev.fcap.store.Store;
import dev.fcap.time.Clock;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices a shared store that lost its data (a Redis restarted without persistence): every
 * {@code failure.probeInterval} it checks the store's identity ({@link Store#checkIdentity}), one check
 * at a time, each bounded by {@code failure.window}, and once more as soon as the store answers after
 * failing calls (a restart is such a gap); a check that fails is ignored (outages are {@link Health}'s).
 * A loss is logged (one line), counted and kept for {@code /ready}; with
 * {@code failure.storeReset: policy} the failure policy then decides, as in an outage, until the
 * longest window of the rules in force has passed since the loss was noticed, so that no recipient
 * gets a fresh quota from the emptied store. Only a store that keeps an identity is checked.
 */
final class StoreResets {
  private static final Logger LOG = LoggerFactory.getLogger(FailoverStore.class); // the decorator's log, one name

  private final Store delegate;
  private final FailurePolicy policy;
  private final Clock clock;
  private final Scheduler scheduler;
  private final LongSupplier longestWindowMs;
  private final Health health;
  private final LongAdder resets = new LongAdder();
  private volatile FailoverStore.Reset last;
  private volatile boolean started;
  private volatile boolean closed;

  StoreResets(Store delegate, FailurePolicy policy, Clock clock, Scheduler scheduler, LongSupplier longestWindowMs,
      Health health) {
    this.delegate = delegate;
    this.policy = policy;
    this.clock = clock;
    this.scheduler = scheduler;
    this.longestWindowMs = longestWindowMs;
    this.health = health;
  }

  /** Starts the checks, if the store keeps an identity. */
  void start() {
    if (delegate.keepsIdentity()) {
      started = true;
      next();
    }
  }

  void close() {
    closed = true;
  }

  long resets() {
    return resets.sum();
  }

  /** The last loss noticed since start, or null. */
  FailoverStore.Reset last() {
    return last;
  }

  /**
   * The store answers again after failing: it may have restarted, so one more check now, beside the
   * regular ones (two checks at once report a loss once: the identity is read or written in one step).
   */
  void checkSoon() {
    if (started && !closed) {
      scheduler.schedule(() -> check(() -> {}), 0);
    }
  }

  private void next() {
    if (!closed) {
      scheduler.schedule(() -> check(this::next), policy.probeInterval().toMillis());
    }
  }

  /** One check; {@code then} runs once it answered or its window passed, and a late loss still counts. */
  private void check(Runnable then) {
    if (closed) {
      return;
    }
    AtomicBoolean settled = new AtomicBoolean();
    Runnable cancel = scheduler.schedule(() -> {
      if (settled.compareAndSet(false, true)) {
        then.run();
      }
    }, policy.window().toMillis());
    Deadlines.call(delegate::checkIdentity).whenComplete((lost, error) -> {
      cancel.run();
      if (error == null && lost.isPresent()) {
        noticed(lost.get());
      }
      if (settled.compareAndSet(false, true)) {
        then.run();
      }
    });
  }

  private void noticed(String why) {
    long now = clock.millis();
    long window = policy.onReset() == FailurePolicy.OnReset.POLICY ? Math.max(0, longestWindowMs.getAsLong()) : 0;
    long until = window > 0 ? now + window : 0;
    resets.increment();
    last = new FailoverStore.Reset(now, why, until);
    if (until > 0) {
      health.decideByPolicyUntil(until);
      LOG.warn("store lost its data: {}; the failure policy decides for the longest window of the rules, {} ms "
          + "(failure.storeReset: policy)", why, window);
    } else {
      LOG.warn("store lost its data: {}; it decides as usual, counting from zero (failure.storeReset: {})", why,
          policy.onReset().id());
    }
  }
}
