package dev.fcap.model;

import java.util.Arrays;
import java.util.Optional;

/** How a rule counts. See {@code docs/algorithms.md} for the exact semantics and error bounds. */
public enum Algorithm {
  /** Exact: admitted iff the costs admitted in (t - W, t] plus this cost are at most L. */
  SLIDING_LOG("sliding-log"),
  /** Approximate, conservative: sub-windows that overlap the window are counted whole. */
  SLIDING_COUNTER("sliding-counter"),
  /** Calendar-aligned windows; allows up to 2L across a boundary. */
  FIXED_WINDOW("fixed-window"),
  /** Generic cell rate algorithm: burst L, sustained rate L/W. */
  GCRA("gcra");

  private final String id;

  Algorithm(String id) {
    this.id = id;
  }

  /** The name used in rule files and the API, e.g. {@code sliding-log}. */
  public String id() {
    return id;
  }

  public static Optional<Algorithm> fromId(String id) {
    return Arrays.stream(values()).filter(a -> a.id.equals(id)).findFirst();
  }

  @Override
  public String toString() {
    return id;
  }
}
