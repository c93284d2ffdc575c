package dev.fcap.store;

import dev.fcap.model.Suppression;


/**
 * What a store answered for one {@link PartitionRequest}. The arrays hold one entry per check, in the
 * order of the request's counters and their checks.
 *
 * @param time the clock value the store decided at (epoch ms)
 * @param allowed true iff every enforced check admitted (for DECIDE: the message was then recorded)
 * @param used cost counted in each check's window before this message
 * @param retryAt per check: {@code time} if it admits, the earliest time it would admit the same
 *     message if nothing else were recorded, or {@link #NEVER}
 * @param replayOf null, or the id of the earlier admitted decision of the same message id: this is
 *     that decision's result again ({@code time} is when it was decided) and nothing was recorded
 * @param degraded true when a failover decorator answered from its outage store instead of the store
 * @param incarnation for a DECIDE whose {@link Idempotency#incarnation()} is not 0: the partition's
 *     incarnation, which its release must name; 0 when the store remembered the decision instead
 * @param suppressed for a request with a {@link SuppressionCheck}: the recipient's entry that covers
 *     the message (the step was then a dry run), else null
 */
public record PartitionResult(long time, boolean allowed, long[] used, long[] retryAt, String replayOf,
    boolean degraded, long incarnation, Suppression suppressed, long bookedAt) implements PartitionAnswer {

  public PartitionResult(long time, boolean allowed, long[] used, long[] retryAt, String replayOf,
      boolean degraded, long incarnation, Suppression suppressed) {
    this(time, allowed, used, retryAt, replayOf, degraded, incarnation, suppressed, 0);
  }

  public PartitionResult(long time, boolean allowed, long[] used, long[] retryAt, String replayOf,
      boolean degraded, long incarnation) {
    this(time, allowed, used, retryAt, replayOf, degraded, incarnation, null);
  }

  /** {@code retryAt} of a check that can never admit the message (its cost exceeds the limit). */
  public static final long NEVER = Long.MAX_VALUE;

  public PartitionResult(long time, boolean allowed, long[] used, long[] retryAt) {
    this(time, allowed, used, retryAt, null, false, 0);
  }

  public PartitionResult(long time, boolean allowed, long[] used, long[] retryAt, String replayOf) {
    this(time, allowed, used, retryAt, replayOf, false, 0);
  }

  public PartitionResult(long time, boolean allowed, long[] used, long[] retryAt, String replayOf,
      boolean degraded) {
    this(time, allowed, used, retryAt, replayOf, degraded, 0);
  }

  @Override
  public int checks() {
    return used.length;
  }

  @Override
  public long used(int check) {
    return used[check];
  }

  @Override
  public long retryAt(int check) {
    return retryAt[check];
  }

  /** This result, marked as decided by an outage store. */
  public PartitionResult asDegraded() {
    return new PartitionResult(time, allowed, used, retryAt, replayOf, true, incarnation, suppressed, bookedAt);
  }

  /** This result, answering the partition's {@code incarnation}. */
  public PartitionResult withIncarnation(long incarnation) {
    return new PartitionResult(time, allowed, used, retryAt, replayOf, degraded, incarnation, suppressed, bookedAt);
  }
}
