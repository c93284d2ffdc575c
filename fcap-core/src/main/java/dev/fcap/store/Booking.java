package dev.fcap.store;

import java.util.Arrays;

/**
 * What a deferred decision asks of its partition's step besides the decision now: if the message is not
 * admitted at the step's time, record it at the earliest instant T at or after that time, at most
 * {@code notAfter}, at which every counter of the request admits it (counting every message recorded
 * for later) and which lies in {@code open}; if there is none, nothing is recorded.
 *
 * @param notAfter the latest instant the message may be booked at (epoch ms)
 * @param open the instants the message may go at, as sorted, disjoint spans {@code [open[2k],
 *     open[2k + 1])} of epoch ms (the engine's send windows, every one open); null: any instant
 * @param admitsNow whether the message may be admitted at the step's time, its counters permitting,
 *     as any message is: the engine found every send window open at the decision's time (judged there,
 *     as for a message not deferred, also when a clock step back has the step decide later); false:
 *     only a booking can record it
 */
public record Booking(long notAfter, long[] open, boolean admitsNow) {

  /** The first instant at or after {@code t} that may be booked (in {@code open}, at most {@code notAfter}), or -1. */
  public long firstOpen(long t) {
    if (t > notAfter) {
      return -1;
    }
    if (open == null) {
      return t;
    }
    for (int k = 0; k < open.length; k += 2) {
      if (t <= open[k + 1]) {
        long at = Math.max(t, open[k]);
        return at <= notAfter ? at : -1;
      }
    }
    return -1;
  }

  /**
   * The same booking from {@code x} on: only instants at or after {@code x}, and never the step's own
   * time unless {@code x} is it (a partition that must book where the other partitions of a decision
   * booked); null if none is left by {@code notAfter}.
   */
  public Booking from(long x) {
    long first = firstOpen(x);
    if (first < 0) {
      return null;
    }
    if (open == null) {
      return new Booking(notAfter, new long[] {x, notAfter}, false);
    }
    int k = 0;
    while (open[k + 1] < x) {
      k += 2;
    }
    long[] spans = java.util.Arrays.copyOfRange(open, k, open.length);
    spans[0] = Math.max(spans[0], x);
    return new Booking(notAfter, spans, false);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Booking b && notAfter == b.notAfter && Arrays.equals(open, b.open) && admitsNow == b.admitsNow;
  }

  @Override
  public int hashCode() {
    return (Long.hashCode(notAfter) * 31 + Arrays.hashCode(open)) * 31 + Boolean.hashCode(admitsNow);
  }

  @Override
  public String toString() {
    return "Booking[notAfter=" + notAfter + ", open=" + Arrays.toString(open) + ", admitsNow=" + admitsNow + "]";
  }
}
