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
  /** Texts up to this many chars are encoded into a per-thread scratch array of three bytes per char. */
  private static final int SCRATCH_CHARS = 2048;
  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

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

  /**
   * The 16 fingerprint bytes of {@code recipient}'s message id, where the partition that remembers it
   * is shared by every recipient (a policy with no rule keyed by the recipient).
   */
  static byte[] ofMessageId(String recipient, String messageId) {
    return ofText(recipient.length() + ":" + recipient + messageId, MESSAGE_ID_SEED);
  }

  /**
   * The fingerprint of a message's content, else of its content key, else null, written into this
   * thread's 16-byte scratch: valid until the thread's next call, so only for a caller that copies the
   * bytes into keys at once and keeps no reference (a decision's request building: saves an array per
   * decision).
   */
  static byte[] ofMessageContentInScratch(dev.fcap.model.Message m) {
    String text = m.content() != null ? m.content() : m.contentKey();
    if (text == null) {
      return null;
    }
    Scratch scratch = SCRATCH.get(); // one thread-local lookup for the text's scratch and the fingerprint's
    ofText(scratch, text, m.content() != null ? CONTENT_SEED : CONTENT_KEY_SEED, scratch.fingerprint, 0);
    return scratch.fingerprint;
  }

  private static byte[] ofText(String text, int seed) {
    byte[] out = new byte[16];
    ofText(text, seed, out, 0);
    return out;
  }

  /**
   * Writes the fingerprint of {@code text}'s UTF-8 bytes at {@code out[at, at + 16)}: the same bytes
   * as {@link #of} of {@code text.getBytes(UTF_8)} (an unpaired surrogate counts as {@code '?'}, as
   * there). The text is encoded into a per-thread scratch array (used and done within this call,
   * never shared) instead of a new array per call: a content of a few hundred chars cost as much
   * allocation as the rest of a decision. {@code FingerprintTest} checks the two agree on every kind
   * of char.
   */
  static void ofText(String text, int seed, byte[] out, int at) {
    ofText(SCRATCH.get(), text, seed, out, at);
  }

  /** {@link #ofText(String, int, byte[], int)} with this thread's scratch, already looked up. */
  private static void ofText(Scratch scratch, String text, int seed, byte[] out, int at) {
    int n = text.length();
    if (n > SCRATCH_CHARS) {
      hash(text.getBytes(java.nio.charset.StandardCharsets.UTF_8), -1, seed, out, at); // rare: not worth a scratch that large
      return;
    }
    char[] chars = scratch.chars;
    byte[] utf8 = scratch.utf8;
    text.getChars(0, n, chars, 0); // bulk copies: reading a String char by char is several times slower
    int ascii = 0;
    for (int i = 0; i < n; i++) { // ASCII, the common case: one byte per char
      char c = chars[i];
      ascii |= c;
      utf8[i] = (byte) c;
    }
    int length = ascii < 0x80 ? n : encode(chars, n, utf8);
    hash(utf8, length, seed, out, at);
  }

  /** The UTF-8 bytes of {@code chars[0, n)} into {@code utf8}; their number. */
  private static int encode(char[] chars, int n, byte[] utf8) {
    int at = 0;
    for (int i = 0; i < n; i++) {
      char c = chars[i];
      if (c < 0x80) {
        utf8[at++] = (byte) c;
      } else if (c < 0x800) {
        utf8[at++] = (byte) (0xc0 | c >> 6);
        utf8[at++] = (byte) (0x80 | c & 0x3f);
      } else if (!Character.isSurrogate(c)) {
        utf8[at++] = (byte) (0xe0 | c >> 12);
        utf8[at++] = (byte) (0x80 | c >> 6 & 0x3f);
        utf8[at++] = (byte) (0x80 | c & 0x3f);
      } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(chars[i + 1])) {
        int cp = Character.toCodePoint(c, chars[++i]);
        utf8[at++] = (byte) (0xf0 | cp >> 18);
        utf8[at++] = (byte) (0x80 | cp >> 12 & 0x3f);
        utf8[at++] = (byte) (0x80 | cp >> 6 & 0x3f);
        utf8[at++] = (byte) (0x80 | cp & 0x3f);
      } else {
        utf8[at++] = '?'; // what String.getBytes(UTF_8) writes for a malformed surrogate
      }
    }
    return at;
  }

  /**
   * A thread's scratch arrays for {@link #ofText}: a text's chars and its UTF-8 bytes (at most three per
   * char); and for {@link #ofMessageContentInScratch}, a fingerprint.
   */
  private static final class Scratch {
    final char[] chars = new char[SCRATCH_CHARS];
    final byte[] fingerprint = new byte[16];
    final byte[] utf8 = new byte[3 * SCRATCH_CHARS];
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
    byte[] out = new byte[16];
    hash(data, data.length, seed, out, 0);
    return out;
  }

  /** MurmurHash3 x64-128 of {@code data[0, length)} ({@code -1}: all of it), big-endian (h1, h2) at {@code out[at]}. */
  private static void hash(byte[] data, int length, int seed, byte[] out, int at) {
    if (length < 0) {
      length = data.length;
    }
    long h1 = seed & 0xffffffffL;
    long h2 = h1;
    int blocks = length / 16;
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
    int rest = length - tail;
    if (rest > 8) {
      h2 ^= mixK2(littleEndian(data, tail + 8, rest - 8));
    }
    if (rest > 0) {
      h1 ^= mixK1(littleEndian(data, tail, Math.min(rest, 8)));
    }
    finish(h1, h2, length, out, at);
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
