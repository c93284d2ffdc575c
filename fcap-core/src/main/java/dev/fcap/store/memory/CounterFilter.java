package dev.fcap.store.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A Bloom filter over counter ids, kept inside a {@link PartitionRecord} (its filter entry): given
 * an id, "certainly not in the record" or "perhaps". 8 bits per counter and 3 probes give about 3 %
 * false positives; a false positive costs the walk the filter saves, never a wrong answer.
 *
 * <p>Hand-written rather than Guava's {@code BloomFilter}: the bits live in a slice of the record's
 * own array (one allocation per record, read with the record's cache lines) and are hashed from
 * slices of it, which a filter object over its own {@code long[]} cannot do. The hash is fixed (a
 * record's filter is written to the store's files and read back by later builds): 8-byte words in
 * little-endian order mixed by multiplication, then MurmurHash3's 64-bit finalizer; the probes are
 * the two halves of the hash combined (Kirsch and Mitzenmacher), each mapped to a bit by a
 * multiply-shift.
 */
final class CounterFilter {
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final int PROBES = 3;

  private CounterFilter() {}

  /** The filter's size in bits for {@code counters} ids: 8 each (whole bytes). */
  static int bits(int counters) {
    return counters * 8;
  }

  /** Adds the id {@code id[from, from + len)} to the filter of {@code bits} bits at {@code filter[at...]}. */
  static void add(byte[] filter, int at, int bits, byte[] id, int from, int len) {
    long h = hash(id, from, len);
    int a = (int) h;
    int b = (int) (h >>> 32);
    for (int i = 0; i < PROBES; i++) {
      int bit = bit(a + i * b, bits);
      filter[at + (bit >>> 3)] |= (byte) (1 << (bit & 7));
    }
  }

  /** Whether the filter may hold the id: false means it certainly does not. */
  static boolean mightHold(byte[] filter, int at, int bits, byte[] id, int from, int len) {
    long h = hash(id, from, len);
    int a = (int) h;
    int b = (int) (h >>> 32);
    for (int i = 0; i < PROBES; i++) {
      int bit = bit(a + i * b, bits);
      if ((filter[at + (bit >>> 3)] & 1 << (bit & 7)) == 0) {
        return false;
      }
    }
    return true;
  }

  private static int bit(int probe, int bits) {
    return (int) (((probe & 0xffffffffL) * bits) >>> 32);
  }

  static long hash(byte[] b, int from, int len) {
    long h = 0x9e3779b97f4a7c15L ^ len;
    int i = 0;
    for (; i + 8 <= len; i += 8) {
      h = (h ^ (long) LONG.get(b, from + i)) * 0xff51afd7ed558ccdL;
      h ^= h >>> 29;
    }
    for (; i < len; i++) {
      h = (h ^ (b[from + i] & 0xff)) * 0xc4ceb9fe1a85ec53L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    return h ^ h >>> 33;
  }
}
