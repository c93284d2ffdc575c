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
 * @param incarnation 0, or a decision that may be <b>stored as nothing</b> (see below)
 * @param incarnationInKey whether {@code incarnation} is read from {@code key} instead, when asked:
 *     its first 8 bytes (1 if they are all 0), as {@link #storedAsNothing} makes it
 *
 * <p><b>Stored as nothing.</b> A store that keeps partition incarnations ({@link #incarnation} not 0)
 * stores nothing per admitted decision; what guards the decision's release is the partition's
 * <em>incarnation</em>, a random 64-bit value a partition takes when an admitted decision creates it
 * (or first asks for one) and keeps until it is deleted (a reset) or the horizon of the last decision
 * that answered it has passed:
 * <ul>
 *   <li>An admitted DECIDE with {@code incarnation} not 0 (not {@code replayable}) remembers nothing
 *       under {@code key} and answers the partition's incarnation in
 *       {@link PartitionResult#incarnation()}; a partition without one takes {@code incarnation}.
 *       A store that keeps no incarnations remembers the decision as if {@code incarnation} were 0 and
 *       answers 0: the caller then releases it by its record.</li>
 *   <li>A RELEASE with {@code incarnation} not 0 is the release of such a decision, recorded at the
 *       request's {@code eventTime}: it undoes the counts only if the partition's incarnation is still
 *       {@code incarnation}, nothing is remembered under {@code key} (the claim of an earlier
 *       release), and the store's time is before {@code eventTime + horizonMs}; it then remembers
 *       {@code key} (the claim, with {@code tail}) until {@code eventTime + horizonMs}. So a release
 *       gives back once, nothing after a reset, and nothing after its horizon, while an admission
 *       stores nothing: a claim costs only per released decision.</li>
 * </ul>
 */
public record Idempotency(byte[] key, long horizonMs, byte[] tail, boolean replayable, long incarnation,
    boolean incarnationInKey) {
  /** The longest tail: its length is stored as a u16 after it. */
  public static final int MAX_TAIL = 65_535;

  public Idempotency(byte[] key, long horizonMs, byte[] tail, boolean replayable) {
    this(key, horizonMs, tail, replayable, 0, false);
  }

  public Idempotency(byte[] key, long horizonMs, byte[] tail, boolean replayable, long incarnation) {
    this(key, horizonMs, tail, replayable, incarnation, false);
  }

  /**
   * A DECIDE that may be stored as nothing, whose candidate incarnation is its random key's first 8
   * bytes, read from the key whenever {@link #incarnation()} is asked: a caller that writes each
   * decision's key into the same array reuses one instance for all of them, as it reuses the array.
   */
  public static Idempotency storedAsNothing(byte[] key, long horizonMs, byte[] tail) {
    return new Idempotency(key, horizonMs, tail, false, 0, true);
  }

  /** The incarnation (see {@link #incarnationInKey}). */
  @Override
  public long incarnation() {
    if (!incarnationInKey) {
      return incarnation;
    }
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = v << 8 | (key[i] & 0xff);
    }
    return v != 0 ? v : 1;
  }

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
    if (incarnationInKey && incarnation != 0) {
      throw new IllegalArgumentException("an incarnation in the key is not given apart");
    }
    if ((incarnation != 0 || incarnationInKey) && replayable) {
      throw new IllegalArgumentException("a decision stored as nothing has no result to replay");
    }
  }
}
