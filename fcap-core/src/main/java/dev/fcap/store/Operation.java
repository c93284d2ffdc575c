package dev.fcap.store;

/** What a store does with one partition. */
public enum Operation {
  /** Evaluate every counter; if every enforced check admits, record the message in every counter. */
  DECIDE,
  /** Evaluate every counter and record nothing (dry run). */
  CHECK,
  /** Undo a message recorded earlier at {@link PartitionRequest#eventTime()}. */
  RELEASE
}
