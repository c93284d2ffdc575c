package dev.fcap.store.internal;

import dev.fcap.store.PartitionAnswer;
import dev.fcap.store.PartitionResult;
import java.util.Arrays;

/**
 * A {@link PartitionAnswer} that its caller owns and reuses: a store that answers on the calling
 * thread writes into it ({@link CallingThreadStore#applyInto}) instead of allocating a {@link PartitionResult},
 * its two arrays and a future per request. Not thread-safe; what it holds is valid until the next
 * {@link #reset}, so a caller must not keep it past reading it (copy with {@link #toResult()}).
 *
 * <p>Written by a store in three steps: {@link #reset} to the request's number of checks (every
 * figure 0), the checks' figures into {@link #usedArray()} and {@link #retryAtArray()}, then
 * {@link #decided}.
 */
public final class ReusableResult implements PartitionAnswer {
  private long time;
  private boolean allowed;
  private int checks;
  private long[] used = new long[8];
  private long[] retryAt = new long[8];
  private String replayOf;
  private long incarnation;
  private long bookedAt;

  /** Starts a new answer of {@code checks} checks, every figure 0: the last answer is gone. */
  public void reset(int checks) {
    if (checks > used.length) {
      used = new long[Math.max(checks, 2 * used.length)];
      retryAt = new long[used.length];
    } else {
      Arrays.fill(used, 0, checks, 0);
      Arrays.fill(retryAt, 0, checks, 0);
    }
    this.checks = checks;
    this.time = 0;
    this.allowed = false;
    this.replayOf = null;
    this.incarnation = 0;
    this.bookedAt = 0;
  }

  /** Where check i's {@link #used(int)} is written: index i; at least {@link #checks()} long. */
  public long[] usedArray() {
    return used;
  }

  /** Where check i's {@link #retryAt(int)} is written: index i; at least {@link #checks()} long. */
  public long[] retryAtArray() {
    return retryAt;
  }

  /** Sets the time the store decided at and whether every enforced check admitted. */
  public void decided(long time, boolean allowed) {
    this.time = time;
    this.allowed = allowed;
  }

  /** Marks this answer as the remembered decision {@code decisionId} answered again. */
  public void replayOf(String decisionId) {
    this.replayOf = decisionId;
  }

  /** Sets the partition's incarnation (see {@link PartitionResult#incarnation()}). */
  public void incarnation(long incarnation) {
    this.incarnation = incarnation;
  }

  /** Marks this answer as booked: the message was recorded at {@code at} (see {@link PartitionAnswer#bookedAt()}). */
  public void bookedAt(long at) {
    this.bookedAt = at;
  }

  @Override
  public long bookedAt() {
    return bookedAt;
  }

  /** An immutable copy, as {@link dev.fcap.store.Store#apply} answers. */
  public PartitionResult toResult() {
    return new PartitionResult(time, allowed, Arrays.copyOf(used, checks), Arrays.copyOf(retryAt, checks), replayOf,
        false, incarnation, null, bookedAt);
  }

  @Override
  public long time() {
    return time;
  }

  @Override
  public boolean allowed() {
    return allowed;
  }

  @Override
  public int checks() {
    return checks;
  }

  @Override
  public long used(int check) {
    return used[check];
  }

  @Override
  public long retryAt(int check) {
    return retryAt[check];
  }

  @Override
  public String replayOf() {
    return replayOf;
  }

  /** Never: only the store itself answers on the calling thread, not a failover decorator's outage store. */
  @Override
  public boolean degraded() {
    return false;
  }

  @Override
  public long incarnation() {
    return incarnation;
  }
}
