package dev.fcap.store;

/**
 * Unsigned LEB128 varints: the length prefixes of partition keys, counter keys and stored records
 * (seven bits a byte, low first, high bit set on every byte but the last). The Redis scripts read
 * the same encoding.
 */
public final class Varint {

  private Varint() {}

  /** How many bytes {@code v} takes. */
  public static int size(int v) {
    int n = 1;
    while ((v >>>= 7) != 0) {
      n++;
    }
    return n;
  }

  /** Writes {@code v} at {@code at}; returns the position after it. */
  public static int write(byte[] out, int at, int v) {
    while ((v & ~0x7f) != 0) {
      out[at++] = (byte) ((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out[at++] = (byte) v;
    return at;
  }

  /** Reads the varint at {@code at}. */
  public static int read(byte[] b, int at) {
    int v = 0;
    int shift = 0;
    while (true) {
      int x = b[at++];
      v |= (x & 0x7f) << shift;
      if (x >= 0) {
        return v;
      }
      shift += 7;
    }
  }

  /** How many bytes the unsigned {@code v} takes (the long form, for time deltas). */
  public static int size(long v) {
    int n = 1;
    while ((v >>>= 7) != 0) {
      n++;
    }
    return n;
  }

  /** Writes the unsigned {@code v} at {@code at}; returns the position after it. */
  public static int write(byte[] out, int at, long v) {
    while ((v & ~0x7fL) != 0) {
      out[at++] = (byte) ((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out[at++] = (byte) v;
    return at;
  }

  /** Reads the long varint at {@code at}. */
  public static long readLong(byte[] b, int at) {
    long v = 0;
    int shift = 0;
    while (true) {
      int x = b[at++];
      v |= (long) (x & 0x7f) << shift;
      if (x >= 0) {
        return v;
      }
      shift += 7;
    }
  }
}
