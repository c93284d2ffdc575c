package dev.fcap.cli;

import dev.fcap.engine.Engine;
import dev.fcap.model.Policy;
import java.util.List;

/**
 * What the decisions of one batch of replay rows were, as bits: per row, whether it was admitted,
 * which rules applied and which refused it (by their place in the tenant's policy). All that the
 * summary and the decisions file read of a decision, written by
 * {@link Engine#decideAt(dev.fcap.model.Message, long, Engine.RuleVerdicts)} without a
 * {@link dev.fcap.model.Decision} per row: those, their outcomes and ids would be about a third of a
 * replay's allocation.
 *
 * <p>Each deciding thread (or, on a store of round trips, each row in flight) writes through a
 * {@link Recorder} of its own, to rows no other writes; the output reads the batch after all are done.
 */
final class BatchVerdicts {
  private final int words;
  private final boolean[] allowed;
  /**
   * Row r: the rules that applied at {@code [r * 3 * words, + words)}, those that refused at the next
   * {@code words}, and those that did not enforce their verdict on it (shadow, count-only, override)
   * at the next.
   */
  private final long[] masks;
  /** Per row: the instant it was booked for (deferred, not admitted now), else 0. */
  private final long[] bookedAt;

  BatchVerdicts(int rows, int words) {
    this.words = words;
    this.allowed = new boolean[rows];
    this.masks = new long[rows * 3 * words];
    this.bookedAt = new long[rows];
  }

  /** The words of 64 rules a row's masks need for the largest of {@code policies}. */
  static int words(List<Policy> policies) {
    int rules = policies.stream().mapToInt(p -> p.rules().size()).max().orElse(0);
    return Math.max(1, (rules + 63) >>> 6);
  }

  boolean allowed(int row) {
    return allowed[row];
  }

  /** The instant row {@code row} was booked for, or 0 when it was not (admitted, refused or not deferred). */
  long bookedAt(int row) {
    return bookedAt[row];
  }

  /** Reports every rule that applied to {@code row} to {@code each}, in policy order. */
  void forEachApplied(int row, Engine.RuleVerdicts each) {
    int base = row * 3 * words;
    for (int w = 0; w < words; w++) {
      long applied = masks[base + w];
      long refused = masks[base + words + w];
      long unenforced = masks[base + 2 * words + w];
      for (long bits = applied; bits != 0; bits &= bits - 1) {
        int bit = Long.numberOfTrailingZeros(bits);
        each.rule(w << 6 | bit, (refused >>> bit & 1) == 0, (unenforced >>> bit & 1) == 0);
      }
    }
  }

  /** Row {@code row} was admitted, or not. */
  void admitted(int row, boolean admitted) {
    allowed[row] = admitted;
  }

  private void rule(int row, int index, boolean admitted, boolean enforced) {
    int base = row * 3 * words;
    long bit = 1L << index; // the shift takes index mod 64
    masks[base + (index >>> 6)] |= bit;
    if (!admitted) {
      masks[base + words + (index >>> 6)] |= bit;
    }
    if (!enforced) {
      masks[base + 2 * words + (index >>> 6)] |= bit;
    }
  }

  /**
   * Where a decision's verdicts go into this batch: one per deciding thread, set {@link Recorder#at}
   * each row in turn, or one per row in flight.
   */
  Recorder recorder() {
    return new Recorder();
  }

  /** Writes a decision's verdicts into the row it is set to. */
  final class Recorder implements Engine.RuleVerdicts {
    private int row;

    /** This recorder, now for row {@code row}. */
    Recorder at(int row) {
      this.row = row;
      return this;
    }

    @Override
    public void rule(int index, boolean admitted, boolean enforced) {
      BatchVerdicts.this.rule(row, index, admitted, enforced);
    }

    @Override
    public void booked(long sendAt) {
      bookedAt[row] = sendAt;
    }
  }
}
