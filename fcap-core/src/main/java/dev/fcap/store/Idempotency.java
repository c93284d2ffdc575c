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
 * <p>The same entry is the decision's release record (the engine's "Releases by decision id"):
 * {@code tail} holds what the engine needs to release it, opaque to the store. A record that is not
 * {@code replayable} (a decision without a message id, whose key nobody sends again) keeps only the
 * decision's time and the tail, not its full result.
 *
 * @param key the message id's 16-byte fingerprint, or a random 16-byte key (the tenant is in the
 *     partition key)
 * @param horizonMs how long the decision is remembered
 * @param tail the engine's bytes, stored with the entry and given back as {@link PartitionResult#replayOf()}
 *     (1 to {@link #MAX_TAIL} bytes; stored with a u16 length)
 * @param replayable whether the entry keeps the full result, to answer a repeated DECIDE with it
 */
public record Idempotency(byte[] key, long horizonMs, byte[] tail, boolean replayable) {
  /** The longest tail: its length is stored as a u16 after it. */
  public static final int MAX_TAIL = 65_535;

  public Idempotency {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(tail, "tail");
    if (key.length != 16) {
      throw new IllegalArgumentException("an idempotency key is a 16-byte fingerprint");
    }
    if (horizonMs < 1) {
      throw new IllegalArgumentException("horizonMs must be positive");
    }
    if (tail.length == 0 || tail.length > MAX_TAIL) {
      throw new IllegalArgumentException("tail must be 1 to " + MAX_TAIL + " bytes");
    }
  }
}
