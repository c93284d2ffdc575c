package dev.fcap.algorithm;

import dev.fcap.store.CounterRequest;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import java.util.List;

/**
 * One atomic step over the counters of a partition, as a pure function: given the states of the
 * request's counters (in request order) and the time, it computes the result and the next states.
 * A Java store calls it under its partition lock and then stores {@code states} back; the Redis
 * script {@code decide.lua} is its mirror.
 *
 * <p>All-or-nothing: on DECIDE, every counter is evaluated first, and the message is recorded in
 * every counter (shadow checks too) only if every enforced check admitted.
 */
public final class PartitionStep {

  private PartitionStep() {}

  /**
   * Applies {@code request} at {@code now}. {@code states[i]} is the state of counter i on entry and
   * its next state on return ({@code null} = empty).
   */
  public static PartitionResult apply(PartitionRequest request, long now, byte[][] states) {
    return apply(request, now, states, null);
  }

  /**
   * {@link #apply} where counter i is the {@link LargeLog} {@code large[i]} when that is not null
   * (then {@code states[i]} is unused): the log is read in place and, on record or release, changed
   * in place, after every counter was evaluated.
   */
  public static PartitionResult apply(PartitionRequest request, long now, byte[][] states, LargeLog[] large) {
    List<CounterRequest> counters = request.counters();
    int checks = request.checks();
    long[] used = new long[checks];
    long[] retryAt = new long[checks];
    boolean allowed = true;
    int at = 0;
    for (int i = 0; i < counters.size(); i++) {
      CounterRequest c = counters.get(i);
      CounterAlgorithm algorithm = CounterAlgorithm.of(c.spec().algorithm());
      LargeLog log = large == null ? null : large[i];
      if (log != null) {
        if (request.operation() == dev.fcap.store.Operation.RELEASE) {
          log.release(c.spec(), now, request.eventTime(), request.cost());
        } else {
          allowed &= log.evaluate(c.spec(), now, request.cost(), used, retryAt, at);
        }
      } else if (request.operation() == dev.fcap.store.Operation.RELEASE) {
        states[i] = algorithm.release(states[i], c.spec(), c.alignMs(), now, request.eventTime(), request.cost());
      } else {
        allowed &= algorithm.evaluate(states[i], c.spec(), c.alignMs(), now, request.cost(), used, retryAt, at);
      }
      at += c.spec().checks();
    }
    if (allowed && request.operation() == dev.fcap.store.Operation.DECIDE) {
      for (int i = 0; i < counters.size(); i++) {
        CounterRequest c = counters.get(i);
        if (large != null && large[i] != null) {
          large[i].record(c.spec(), now, request.cost());
        } else {
          states[i] = CounterAlgorithm.of(c.spec().algorithm()).record(states[i], c.spec(), c.alignMs(), now,
              request.cost());
        }
      }
    }
    return new PartitionResult(now, allowed, used, retryAt);
  }

  /** The first instant at which the state of counter {@code c} stops mattering. */
  public static long expiresAt(CounterRequest c, byte[] state) {
    return CounterAlgorithm.of(c.spec().algorithm()).expiresAt(state, c.spec(), c.alignMs());
  }

  /**
   * Reads a stored counter for inspection: {@code used[at + i]} and, for a message of cost 1,
   * {@code retryAt[at + i]} (when the next message would pass) per check of {@code spec}.
   */
  public static void inspect(byte[] state, CounterRequest c, long now, long[] used, long[] retryAt, int at) {
    CounterAlgorithm.of(c.spec().algorithm()).evaluate(state, c.spec(), c.alignMs(), now, 1, used, retryAt, at);
  }
}
