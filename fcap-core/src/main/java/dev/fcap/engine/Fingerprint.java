package dev.fcap.engine;

/**
 * The 128-bit fingerprint that stands for a message's content: MurmurHash3 (x64, 128-bit variant)
 * of the exact UTF-8 bytes. Content itself is never stored. A {@code contentKey} is hashed with
 * another seed, so a content and a content key with the same text never share counters.
 */
public final class Fingerprint {
  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;
  private static final java.lang.invoke.VarHandle LONG_LE =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
  static final int CONTENT_SEED = 0;
  static final int CONTENT_KEY_SEED = 0x6663_6170; // "fcap"
  static final int MESSAGE_ID_SEED = 0x6d73_6764; // "msgd"

  private Fingerprint() {}

  /** The 16 fingerprint bytes of a content (big-endian h1, h2). */
  public static byte[] ofContent(String content) {
    return ofText(content, CONTENT_SEED);
  }

  /** The 16 fingerprint bytes of a caller-chosen content key. */
  public static byte[] ofContentKey(String contentKey) {
    return ofText(contentKey, CONTENT_KEY_SEED);
  }

  /** The 16 fingerprint bytes of a caller's message id (another seed: never equal to a content's). */
  public static byte[] ofMessageId(String messageId) {
    return ofText(messageId, MESSAGE_ID_SEED);
  }

  private static byte[] ofText(String text, int seed) {
    byte[] out = new byte[16];
    ofText(text, seed, out, 0);
    return out;
  }

  /**
   * Writes the fingerprint of {@code text}'s UTF-8 bytes at {@code out[at, at + 16)}, encoding the
   * chars straight into the hash: the same bytes as {@link #of} of {@code text.getBytes(UTF_8)}
   * (an unpaired surrogate counts as {@code '?'}, as there), without materialising them. This runs
   * on every decision with content; a content of a few hundred chars cost as much allocation as the
   * rest of the decision ({@code FingerprintTest} checks the two agree on every kind of char).
   */
  static void ofText(String text, int seed, byte[] out, int at) {
    long h1 = seed & 0xffffffffL;
    long h2 = h1;
    long k1 = 0;
    long k2 = 0;
    int fill = 0; // bytes of the current 16-byte block
    long length = 0;
    int n = text.length();
    for (int i = 0; i < n; i++) {
      int c = text.charAt(i);
      int utf8; // the char's UTF-8 bytes, first byte lowest
      int count;
      if (c < 0x80) {
        utf8 = c;
        count = 1;
      } else if (c < 0x800) {
        utf8 = (0xc0 | c >> 6) | (0x80 | c & 0x3f) << 8;
        count = 2;
      } else if (!Character.isSurrogate((char) c)) {
        utf8 = (0xe0 | c >> 12) | (0x80 | c >> 6 & 0x3f) << 8 | (0x80 | c & 0x3f) << 16;
        count = 3;
      } else if (Character.isHighSurrogate((char) c) && i + 1 < n && Character.isLowSurrogate(text.charAt(i + 1))) {
        int cp = Character.toCodePoint((char) c, text.charAt(++i));
        utf8 = (0xf0 | cp >> 18) | (0x80 | cp >> 12 & 0x3f) << 8 | (0x80 | cp >> 6 & 0x3f) << 16
            | (0x80 | cp & 0x3f) << 24;
        count = 4;
      } else {
        utf8 = '?'; // what String.getBytes(UTF_8) writes for a malformed surrogate
        count = 1;
      }
      length += count;
      for (int b = 0; b < count; b++, utf8 >>>= 8) {
        long v = utf8 & 0xffL;
        if (fill < 8) {
          k1 |= v << (fill << 3);
        } else {
          k2 |= v << ((fill - 8) << 3);
        }
        if (++fill == 16) {
          h1 ^= mixK1(k1);
          h1 = Long.rotateLeft(h1, 27) + h2;
          h1 = h1 * 5 + 0x52dce729;
          h2 ^= mixK2(k2);
          h2 = Long.rotateLeft(h2, 31) + h1;
          h2 = h2 * 5 + 0x38495ab5;
          k1 = 0;
          k2 = 0;
          fill = 0;
        }
      }
    }
    if (fill > 8) {
      h2 ^= mixK2(k2);
    }
    if (fill > 0) {
      h1 ^= mixK1(k1);
    }
    finish(h1, h2, length, out, at);
  }

  /** Lower-case hex of fingerprint bytes, as the API shows them. */
  public static String hex(byte[] fingerprint) {
    char[] out = new char[fingerprint.length * 2];
    for (int i = 0; i < fingerprint.length; i++) {
      out[2 * i] = Character.forDigit((fingerprint[i] >> 4) & 0xf, 16);
      out[2 * i + 1] = Character.forDigit(fingerprint[i] & 0xf, 16);
    }
    return new String(out);
  }

  static byte[] of(byte[] data, int seed) {
    long h1 = seed & 0xffffffffL;
    long h2 = h1;
    int blocks = data.length / 16;
    for (int i = 0; i < blocks; i++) {
      long k1 = (long) LONG_LE.get(data, i * 16);
      long k2 = (long) LONG_LE.get(data, i * 16 + 8);
      h1 ^= mixK1(k1);
      h1 = Long.rotateLeft(h1, 27) + h2;
      h1 = h1 * 5 + 0x52dce729;
      h2 ^= mixK2(k2);
      h2 = Long.rotateLeft(h2, 31) + h1;
      h2 = h2 * 5 + 0x38495ab5;
    }
    int tail = blocks * 16;
    int rest = data.length - tail;
    if (rest > 8) {
      h2 ^= mixK2(littleEndian(data, tail + 8, rest - 8));
    }
    if (rest > 0) {
      h1 ^= mixK1(littleEndian(data, tail, Math.min(rest, 8)));
    }
    byte[] out = new byte[16];
    finish(h1, h2, data.length, out, 0);
    return out;
  }

  /** Murmur3's finalization over {@code length} bytes, written big-endian (h1, h2) at {@code out[at]}. */
  private static void finish(long h1, long h2, long length, byte[] out, int at) {
    h1 ^= length;
    h2 ^= length;
    h1 += h2;
    h2 += h1;
    h1 = finalMix(h1);
    h2 = finalMix(h2);
    h1 += h2;
    h2 += h1;
    for (int i = 0; i < 8; i++) {
      out[at + i] = (byte) (h1 >>> (56 - 8 * i));
      out[at + 8 + i] = (byte) (h2 >>> (56 - 8 * i));
    }
  }

  private static long littleEndian(byte[] b, int at, int n) {
    long v = 0;
    for (int i = n - 1; i >= 0; i--) {
      v = (v << 8) | (b[at + i] & 0xffL);
    }
    return v;
  }

  private static long mixK1(long k1) {
    return Long.rotateLeft(k1 * C1, 31) * C2;
  }

  private static long mixK2(long k2) {
    return Long.rotateLeft(k2 * C2, 33) * C1;
  }

  private static long finalMix(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }
}
