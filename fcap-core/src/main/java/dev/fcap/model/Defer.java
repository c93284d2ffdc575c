package dev.fcap.model;

import java.time.Instant;
import java.util.Objects;

/**
 * A message's request to be booked rather than refused: if it may not go now, it is recorded at the
 * earliest instant T, at most {@link #notAfter()}, at which every rule admits it (send windows and
 * counters, counting every message booked before it), and its decision answers {@code deferred} with
 * {@code sendAt} T. If no such instant exists, it is refused as without a deferral, and nothing is
 * recorded.
 *
 * @param notAfter the latest instant to book at (epoch ms); 0: the decision's time plus the policy's
 *     longest window, at most 7 days
 */
public record Defer(long notAfter) {
  /** A deferral as far as the policy's longest window (at most 7 days). */
  public static final Defer BY_DEFAULT = new Defer(0);

  public Defer {
    if (notAfter < 0) {
      throw new InvalidMessageException("notAfter", "notAfter must be an instant after 1970, got " + notAfter);
    }
  }

  /** A deferral no later than {@code notAfter}. */
  public static Defer until(Instant notAfter) {
    Objects.requireNonNull(notAfter, "notAfter");
    if (notAfter.toEpochMilli() <= 0) {
      throw new InvalidMessageException("notAfter", "notAfter must be an instant after 1970, got " + notAfter);
    }
    return new Defer(notAfter.toEpochMilli());
  }

  /** Whether the caller named its own latest instant (else the policy's longest window sets it). */
  public boolean hasNotAfter() {
    return notAfter != 0;
  }
}
