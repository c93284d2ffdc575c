package dev.fcap.model;

/**
 * What a release by decision id did. {@code released} is true once the decision's counts are given
 * back, also when an earlier call (or a release by message id) already gave them back: releasing is
 * idempotent. Otherwise {@code reason} says why it can no longer be honoured:
 * <ul>
 *   <li>{@code expired}: the decision is older than the release horizon (its record is gone);</li>
 *   <li>{@code unknown}: not a releasable decision id of this deployment: garbled or forged, another
 *       tenant's, a denied decision's, or issued while releases by decision id were off.</li>
 * </ul>
 *
 * @param reason null when released
 */
public record ReleaseResult(boolean released, String reason) {
  public static final ReleaseResult RELEASED = new ReleaseResult(true, null);
  public static final ReleaseResult EXPIRED = new ReleaseResult(false, "expired");
  public static final ReleaseResult UNKNOWN = new ReleaseResult(false, "unknown");
}
