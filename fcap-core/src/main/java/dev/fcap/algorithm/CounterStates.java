package dev.fcap.algorithm;

import java.util.Arrays;

/**
 * The states of a request's counters during one {@link PartitionStep}, each either a slice of a
 * larger array or an array of its own.
 *
 * <p><b>Why slices.</b> A store that packs a partition's counters into one array (the memory
 * store's record) hands the step each state where it lies, and the algorithms read it there: a
 * decision copies no state out of the record. A refused decision, most of a busy recipient's, then
 * changes nothing and allocates nothing for its states; an admitted one reads the old states in
 * place and writes only the new ones. A state the step computes is an array of its own
 * ({@link #set}); an empty counter has length 0 (no algorithm writes an empty state: they answer
 * null for one).
 *
 * <p><b>New states in scratch.</b> An algorithm may write a state it records into this object's own
 * scratch array ({@link #newState}) instead of an array of its own: the store copies it from there
 * into the partition's new record in the same step, so an admission allocates only that record. The
 * scratch is overwritten by the next step; {@link #get} never hands it out.
 *
 * <p>Not thread-safe: its owner (a store segment, under its lock) reuses it from one step to the
 * next, and {@link #clear}s it after each so that it keeps no record alive.
 */
public final class CounterStates {
  private byte[][] bytes;
  private int[] from;
  private int[] length;
  private int size;
  /** Where {@link #newState} writes; {@code scratchUsed} bytes of it are taken in this step. */
  private byte[] scratch = new byte[256];
  private int scratchUsed;

  /** Room for {@code capacity} counters before it grows. */
  public CounterStates(int capacity) {
    bytes = new byte[capacity][];
    from = new int[capacity];
    length = new int[capacity];
  }

  /** States of {@code counters} wholly given, in order (null: empty). */
  public static CounterStates of(byte[]... states) {
    CounterStates s = new CounterStates(states.length).reset(states.length);
    for (int i = 0; i < states.length; i++) {
      s.set(i, states[i]);
    }
    return s;
  }

  /** Makes it hold {@code n} empty states. */
  public CounterStates reset(int n) {
    if (bytes.length < n) {
      bytes = new byte[n][];
      from = new int[n];
      length = new int[n];
    } else {
      clear();
    }
    size = n;
    scratchUsed = 0;
    return this;
  }

  /** Drops every reference it holds (the size stays). */
  public void clear() {
    Arrays.fill(bytes, 0, size, null);
    Arrays.fill(length, 0, size, 0);
  }

  public int size() {
    return size;
  }

  /** State {@code i} is {@code source[at, at + n)}. */
  public void slice(int i, byte[] source, int at, int n) {
    bytes[i] = n == 0 ? null : source;
    from[i] = at;
    length[i] = n;
  }

  /**
   * Makes state {@code i} a new state of {@code n} bytes (n > 0) in this object's scratch, to be
   * written whole by the caller at {@link #from}{@code (i)} of the returned array (its bytes are
   * left over from earlier steps); valid until the next {@link #reset}.
   */
  public byte[] newState(int i, int n) {
    if (scratchUsed + n > scratch.length) {
      // states set earlier keep the old array, which nothing writes any more
      scratch = new byte[Math.max(2 * scratch.length, n)];
      scratchUsed = 0;
    }
    slice(i, scratch, scratchUsed, n);
    scratchUsed += n;
    return scratch;
  }

  /** State {@code i} is the whole of {@code state} (null: empty). */
  public void set(int i, byte[] state) {
    slice(i, state, 0, Bytes.length(state));
  }

  public boolean isEmpty(int i) {
    return length[i] == 0;
  }

  /** The array state {@code i} lies in (null: empty); it starts at {@link #from} and is {@link #length} long. */
  public byte[] source(int i) {
    return bytes[i];
  }

  public int from(int i) {
    return from[i];
  }

  public int length(int i) {
    return length[i];
  }

  /** State {@code i} as an array of its own (null: empty); the array itself if it is one (never the scratch). */
  public byte[] get(int i) {
    byte[] b = bytes[i];
    if (b == null || b != scratch && from[i] == 0 && length[i] == b.length) {
      return b;
    }
    return Arrays.copyOfRange(b, from[i], from[i] + length[i]);
  }
}
