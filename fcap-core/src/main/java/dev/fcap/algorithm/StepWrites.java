package dev.fcap.algorithm;

/**
 * What one {@link PartitionStep} leaves its store to write besides the counter states: whether the
 * partition changed at all, the entry remembered under the request's message id (a decision to
 * answer again, or a release's claim) and until when, whether that id's entry is forgotten (a
 * release by message id), and the incarnation a DECIDE stored as nothing stamps on the partition.
 * Where an entry lives (in the partition's value or beside it) is the store's layout, not the step's.
 * A store keeps one per lock and the step overwrites every field.
 */
public final class StepWrites {
  private boolean changed;
  private byte[] remember;
  private long rememberUntil;
  private boolean forget;
  private long stamp;
  private long stampUntil;

  void clear() {
    changed = false;
    remember = null;
    rememberUntil = 0;
    forget = false;
    stamp = 0;
    stampUntil = 0;
  }

  void changed() {
    changed = true;
  }

  void remember(byte[] entry, long until) {
    remember = entry;
    rememberUntil = until;
  }

  void forget() {
    forget = true;
  }

  void stamp(long incarnation, long until) {
    stamp = incarnation;
    stampUntil = until;
  }

  /** Whether the partition changed: the counter states (and what follows) must be written. */
  public boolean isChanged() {
    return changed;
  }

  /** The entry to remember under the request's message id ({@link PartitionStep#remember} bytes); null: none. */
  public byte[] remembered() {
    return remember;
  }

  /** Until when (epoch ms) the {@link #remembered} entry is kept. */
  public long rememberedUntil() {
    return rememberUntil;
  }

  /** Whether the entry remembered under the request's message id is forgotten (released). */
  public boolean forgets() {
    return forget;
  }

  /** The incarnation the partition takes if it has no live one (0: none), kept at least until {@link #stampedUntil}. */
  public long stamp() {
    return stamp;
  }

  public long stampedUntil() {
    return stampUntil;
  }
}
