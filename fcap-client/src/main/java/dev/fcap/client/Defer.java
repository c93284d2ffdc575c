package dev.fcap.client;

import java.time.Instant;
import java.util.Objects;

/**
 * A message's request to be booked rather than refused: if it may not go now, the server records it
 * at the earliest instant every rule admits it (send windows and caps, counting every message already
 * booked), no later than {@link #notAfter()}, and answers a {@link Decision#deferred() deferred}
 * decision: send the message at its {@link Decision#sendAt() sendAt}, or release its
 * {@link Decision#decisionId() decisionId} to give the slot back. If there is no such instant, the
 * message is refused as without a deferral and nothing is recorded; if it may go now, it is admitted as
 * usual. A server whose store or rules cannot book answers a 400 {@code defer_unsupported}; when the
 * server cannot be asked, the {@link Fallback} decides and nothing is booked.
 *
 * @param notAfter the latest instant to book at; null: the decision's time plus the policy's longest
 *     window, at most 7 days
 */
public record Defer(Instant notAfter) {
  /** A deferral as far as the policy's longest window (at most 7 days). */
  public static final Defer BY_DEFAULT = new Defer(null);

  public Defer {
    if (notAfter != null && notAfter.toEpochMilli() <= 0) {
      throw new IllegalArgumentException("notAfter must be an instant after 1970, got " + notAfter);
    }
  }

  /** A deferral no later than {@code notAfter}. */
  public static Defer until(Instant notAfter) {
    return new Defer(Objects.requireNonNull(notAfter, "notAfter"));
  }
}
