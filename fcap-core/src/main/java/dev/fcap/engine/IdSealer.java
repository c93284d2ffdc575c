package dev.fcap.engine;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.function.Function;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The keyed primitives of decision ids: a deterministic authenticated cipher in the SIV style, so
 * that the same plain text always seals to the same id and any change to an id fails its MAC.
 *
 * <p><b>Design.</b> An id is a letter naming its seal, then {@code base64url(iv ct)}. Ids sealed now
 * ({@code 'e'}) take the IV from AES-CMAC (RFC 4493) over the plain text, its first 12 bytes, and
 * encrypt the plain text with AES-128-CTR from the counter block {@code iv || 0:u32}; the two keys
 * are derived from the deployment's secret. Sealing is on the path of every admitted decision, so it
 * is all AES on two ciphers per thread that are initialised once: CBC for the MAC, ECB over counter
 * blocks for the key stream (a CTR cipher would need a new {@code init} per IV, which cost more than
 * the encryption), and the id's characters are written into a per-thread array: a seal allocates its
 * String only. The letter versions the format: a later seal takes another letter, and an id of a
 * letter this build does not know opens to nothing.
 */
final class IdSealer {
  /** Bytes of the synthetic IV (the truncated MAC) in front of the cipher text. */
  static final int IV = 12;
  private static final int BLOCK = 16;
  private static final char SEAL = 'e';
  private static final byte[] ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);

  private final SecretKeySpec macKey;
  private final SecretKeySpec ctrKey;
  /** CMAC's subkeys: the last block is masked with K1 when it is whole, with K2 when padded. */
  private final byte[] k1;
  private final byte[] k2;
  /** {@link #seal}, as the function a decision seals its id with when it is first read. */
  final Function<byte[], String> sealing = this::seal;
  private final ThreadLocal<Work> work = ThreadLocal.withInitial(Work::new);

  /** The sealer of a deployment's 32-byte secret: every key is derived from it (HMAC-SHA256 of a label). */
  IdSealer(byte[] secret) {
    this(hmac(new SecretKeySpec(secret, "HmacSHA256")));
  }

  private IdSealer(Mac derive) {
    this(Arrays.copyOf(derive.doFinal(ascii("siv/cmac")), BLOCK), Arrays.copyOf(derive.doFinal(ascii("siv/ctr")), BLOCK));
  }

  /** A sealer of these AES-128 keys (RFC 4493's test vectors name the key). */
  IdSealer(byte[] cmacKey, byte[] ctrKey) {
    this.macKey = new SecretKeySpec(cmacKey, "AES");
    this.ctrKey = new SecretKeySpec(ctrKey, "AES");
    byte[] l = new byte[BLOCK];
    try {
      l = cipher("AES/ECB/NoPadding", macKey, null).doFinal(l);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
    this.k1 = doubled(l);
    this.k2 = doubled(k1);
  }

  /** This thread's scratch and ciphers: write a plain text into {@link Work#text}, then seal it. */
  Work work() {
    return work.get();
  }

  /** The id of {@code plain} (a copy into this thread's scratch, then {@link Work#seal}). */
  String seal(byte[] plain) {
    return work().holding(plain).seal(plain.length);
  }

  /** The length of the id of a plain text of {@code plain} bytes. */
  static int idLength(int plain) {
    int raw = IV + plain;
    return 1 + raw / 3 * 4 + (raw % 3 == 0 ? 0 : raw % 3 + 1);
  }

  /** The plain text {@code id} seals, or null if it is not an id sealed with this key. */
  byte[] open(String id) {
    if (id.length() < 2 || id.charAt(0) != SEAL) {
      return null;
    }
    byte[] raw;
    try {
      raw = Base64.getUrlDecoder().decode(id.substring(1));
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (raw.length <= IV) {
      return null;
    }
    return work().open(raw);
  }

  /** The whole AES-CMAC of {@code message} (16 bytes). */
  byte[] cmac(byte[] message) {
    Work w = work().holding(message);
    w.cmac(message.length);
    return w.mac.clone();
  }

  /** One thread's ciphers and scratch arrays (a Cipher is not thread-safe); the arrays grow to the longest id. */
  final class Work {
    /** CBC from a zero IV: CMAC's chain (a {@code doFinal} leaves it ready for the next MAC). */
    private final Cipher cbc = cipher("AES/CBC/NoPadding", macKey, new IvParameterSpec(new byte[BLOCK]));
    private final Cipher ecb = cipher("AES/ECB/NoPadding", ctrKey, null);
    private final byte[] last = new byte[BLOCK];
    private final byte[] mac = new byte[BLOCK];
    /** The IV, then the plain text (the cipher text once sealed). */
    private byte[] text = new byte[256];
    /** The CBC output before the MAC's block (discarded), then the counter blocks. */
    private byte[] blocks = new byte[256];
    private byte[] stream = new byte[256];
    private byte[] chars = new byte[idLength(256)];

    /** The array to write a plain text of {@code length} bytes into, from index {@link #IV}. */
    byte[] text(int length) {
      int blocked = (length + BLOCK - 1) / BLOCK * BLOCK;
      if (text.length < IV + blocked) {
        text = new byte[IV + blocked];
        blocks = new byte[blocked];
        stream = new byte[blocked];
        chars = new byte[idLength(blocked)];
      }
      return text;
    }

    /** This work with a copy of {@code plain} as its plain text. */
    private Work holding(byte[] plain) {
      System.arraycopy(plain, 0, text(plain.length), IV, plain.length);
      return this;
    }

    /** The id of the plain text of {@code length} bytes written into {@link #text}. */
    String seal(int length) {
      cmac(length);
      System.arraycopy(mac, 0, text, 0, IV);
      crypt(length);
      return encoded(IV + length);
    }

    private byte[] open(byte[] raw) {
      int length = raw.length - IV;
      System.arraycopy(raw, 0, text(length), 0, raw.length);
      crypt(length);
      cmac(length);
      return MessageDigest.isEqual(Arrays.copyOf(mac, IV), Arrays.copyOf(raw, IV))
          ? Arrays.copyOfRange(text, IV, IV + length) : null;
    }

    /**
     * AES-CMAC of the plain text {@code text[IV, IV + length)} into {@link #mac}: CBC over all but
     * the last block, then the last, padded and masked.
     */
    private void cmac(int length) {
      int before = length == 0 ? 0 : (length - 1) / BLOCK * BLOCK;
      int rest = length - before;
      byte[] mask = rest == BLOCK ? k1 : k2;
      for (int i = 0; i < BLOCK; i++) {
        byte b = i < rest ? text[IV + before + i] : i == rest ? (byte) 0x80 : 0;
        last[i] = (byte) (b ^ mask[i]);
      }
      try {
        if (before > 0) {
          cbc.update(text, IV, before, blocks, 0);
        }
        cbc.doFinal(last, 0, BLOCK, mac, 0);
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException(e);
      }
    }

    /** AES-CTR over {@code text[IV, IV + length)} in place, from the counter block {@code text[0, IV) || 0}. */
    private void crypt(int length) {
      int n = (length + BLOCK - 1) / BLOCK;
      for (int b = 0; b < n; b++) {
        int at = b * BLOCK;
        System.arraycopy(text, 0, blocks, at, IV);
        blocks[at + 12] = (byte) (b >>> 24);
        blocks[at + 13] = (byte) (b >>> 16);
        blocks[at + 14] = (byte) (b >>> 8);
        blocks[at + 15] = (byte) b;
      }
      try {
        ecb.doFinal(blocks, 0, n * BLOCK, stream, 0);
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException(e);
      }
      for (int i = 0; i < length; i++) {
        text[IV + i] ^= stream[i];
      }
    }

    /**
     * {@code SEAL + base64url(text[0, length))} without padding. Written here rather than with
     * {@link Base64.Encoder}, which encodes only whole arrays: it would cost two more copies per id.
     */
    private String encoded(int length) {
      byte[] t = text;
      byte[] c = chars;
      c[0] = (byte) SEAL;
      int o = 1;
      int i = 0;
      for (int whole = length - length % 3; i < whole; i += 3) {
        int v = (t[i] & 0xff) << 16 | (t[i + 1] & 0xff) << 8 | t[i + 2] & 0xff;
        c[o++] = ALPHABET[v >>> 18];
        c[o++] = ALPHABET[v >>> 12 & 63];
        c[o++] = ALPHABET[v >>> 6 & 63];
        c[o++] = ALPHABET[v & 63];
      }
      if (length - i == 1) {
        int v = t[i] & 0xff;
        c[o++] = ALPHABET[v >>> 2];
        c[o++] = ALPHABET[(v & 3) << 4];
      } else if (length - i == 2) {
        int v = (t[i] & 0xff) << 8 | t[i + 1] & 0xff;
        c[o++] = ALPHABET[v >>> 10];
        c[o++] = ALPHABET[v >>> 4 & 63];
        c[o++] = ALPHABET[(v & 15) << 2];
      }
      return new String(c, 0, o, StandardCharsets.ISO_8859_1);
    }
  }

  private static Mac hmac(SecretKeySpec key) {
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      m.init(key);
      return m;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }

  private static Cipher cipher(String transformation, SecretKeySpec key, IvParameterSpec iv) {
    try {
      Cipher c = Cipher.getInstance(transformation);
      c.init(Cipher.ENCRYPT_MODE, key, iv);
      return c;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES is part of every Java runtime", e);
    }
  }

  /** Doubling in GF(2^128), as CMAC derives its subkeys. */
  private static byte[] doubled(byte[] in) {
    byte[] out = new byte[BLOCK];
    for (int i = 0; i < BLOCK; i++) {
      out[i] = (byte) (in[i] << 1 | (i + 1 < BLOCK ? (in[i + 1] & 0xff) >>> 7 : 0));
    }
    if ((in[0] & 0x80) != 0) {
      out[BLOCK - 1] ^= (byte) 0x87;
    }
    return out;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
