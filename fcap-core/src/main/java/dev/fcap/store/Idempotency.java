package dev.fcap.store;

import java.util.Objects;

/**
 * Makes a {@link Operation#DECIDE} idempotent: the store remembers an admitted decision under
 * {@code key} in the request's partition, atomically with the counts, for {@code horizonMs}; the same
 * key within that time gets the first decision's result again ({@link PartitionResult#replayOf()})
 * and records nothing. A {@link Operation#RELEASE} carrying it undoes the counts only if the key is
 * still remembered, and forgets it: releasing twice gives back once, and a retry after a released
 * send is decided afresh. Denials are not remembered: they recorded nothing, so deciding a
 * retry again cannot count twice.
 *
 * @param key the message id's 16-byte fingerprint (the tenant is in the partition key)
 * @param horizonMs how long the decision is remembered
 * @param decisionId the id the decision gets if it is admitted now (ASCII, at most 255 bytes)
 */
public record Idempotency(byte[] key, long horizonMs, byte[] decisionId) {
  public Idempotency {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(decisionId, "decisionId");
    if (key.length != 16) {
      throw new IllegalArgumentException("an idempotency key is a 16-byte fingerprint");
    }
    if (horizonMs < 1) {
      throw new IllegalArgumentException("horizonMs must be positive");
    }
    if (decisionId.length == 0 || decisionId.length > 255) {
      throw new IllegalArgumentException("decisionId must be 1 to 255 bytes");
    }
  }
}
