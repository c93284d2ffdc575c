package dev.fcap.engine;

import dev.fcap.model.Dimension;
import dev.fcap.store.Varint;
import java.io.ByteArrayOutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Partition and counter keys. Every variable part is length-prefixed (content is a fixed 16-byte
 * fingerprint), and the first byte tells the kind of partition, so no pair of distinct identities
 * (however odd their characters or lengths) encodes to the same bytes.
 *
 * <pre>
 * recipient partition := 'r' varint(len) tenant recipient                (recipient is the rest)
 * shared partition    := 's' varint(len) tenant (varint(len) dimension value)*
 * counter key         := groupId:i64 value*    (the values of the group's key dimensions that the
 *                                               partition does not already name, in key order)
 * value               := fingerprint[16] for content, varint(len) utf8 otherwise
 * </pre>
 */
final class Keys {
  static final byte RECIPIENT_PARTITION = 'r';
  static final byte SHARED_PARTITION = 's';
  static final byte NOTHING_PARTITION = 'n';

  private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private Keys() {}

  /**
   * Fills {@code key[0, 16)} with random bytes: a record's key, or what makes an id unique. Two
   * {@code nextLong}s, where {@code Random.nextBytes} draws and spreads an int per four bytes.
   */
  static byte[] random16(byte[] key) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    LONG_LE.set(key, 0, random.nextLong());
    LONG_LE.set(key, 8, random.nextLong());
    return key;
  }

  static byte[] recipientPartition(String tenant, String recipient) {
    return recipientPartition(tenant.getBytes(StandardCharsets.UTF_8), recipient);
  }

  /** The recipient partition, given the tenant's UTF-8 bytes (its compiled policy holds them). */
  static byte[] recipientPartition(byte[] tenant, String recipient) {
    return recipientPartition(tenant, recipient, byte[]::new);
  }

  /**
   * {@link #recipientPartition(byte[], String)} written into {@code buffer.apply(length)} when the
   * recipient is ASCII (a buffer the caller reuses); into an array of its own otherwise.
   */
  static byte[] recipientPartition(byte[] tenant, String recipient, java.util.function.IntFunction<byte[]> buffer) {
    // one pass for the usual ASCII recipient: copy as if ASCII, re-encode only if a char was not
    int rLen = recipient.length();
    byte[] out = buffer.apply(1 + Varint.size(tenant.length) + tenant.length + rLen);
    int at = header(out, tenant);
    int ascii = 0;
    for (int i = 0; i < rLen; i++) {
      char c = recipient.charAt(i);
      ascii |= c;
      out[at + i] = (byte) c;
    }
    if (ascii < 0x80) {
      return out;
    }
    byte[] r = recipient.getBytes(StandardCharsets.UTF_8);
    out = new byte[1 + Varint.size(tenant.length) + tenant.length + r.length];
    at = header(out, tenant);
    System.arraycopy(r, 0, out, at, r.length);
    return out;
  }

  private static int header(byte[] out, byte[] tenant) {
    out[0] = RECIPIENT_PARTITION;
    int at = Varint.write(out, 1, tenant.length);
    System.arraycopy(tenant, 0, out, at, tenant.length);
    return at + tenant.length;
  }

  /**
   * Names the tenant of a decision that recorded nothing (no rule applied): the partition its
   * decision id seals; no store ever holds it.
   */
  static byte[] nothingPartition(byte[] tenant) {
    byte[] out = new byte[1 + Varint.size(tenant.length) + tenant.length];
    out[0] = NOTHING_PARTITION;
    System.arraycopy(tenant, 0, out, Varint.write(out, 1, tenant.length), tenant.length);
    return out;
  }

  /** The tenant a partition key names, or null if the bytes are not a partition key. */
  static String tenantOf(byte[] partition) {
    if (partition.length < 2 || partition[0] != RECIPIENT_PARTITION && partition[0] != SHARED_PARTITION
        && partition[0] != NOTHING_PARTITION) {
      return null;
    }
    int len = 0;
    int at = 1;
    for (int shift = 0; at < partition.length && shift < 35; shift += 7) {
      int b = partition[at++];
      len |= (b & 0x7f) << shift;
      if (b >= 0) {
        return len < 0 || len > partition.length - at ? null : new String(partition, at, len, StandardCharsets.UTF_8);
      }
    }
    return null;
  }

  static byte[] sharedPartition(String tenant, List<Dimension> dims, String[] values, byte[] fingerprint) {
    Buffer b = new Buffer(64);
    b.write(SHARED_PARTITION);
    b.string(tenant);
    for (int i = 0; i < dims.size(); i++) {
      b.string(dims.get(i).toString());
      value(b, dims.get(i), values[i], fingerprint);
    }
    return b.toByteArray();
  }

  /**
   * The counter key of a group: its id, then (in a recipient partition) its values besides the
   * recipient. {@code values} is null when the key holds only the recipient and content, which the
   * partition and the fingerprint already name.
   */
  static byte[] counterKey(long groupId, List<Dimension> dims, String[] values, byte[] fingerprint, boolean inRecipient) {
    if (!inRecipient) {
      return id(new byte[8], groupId);
    }
    if (values != null) {
      Buffer b = new Buffer(8 + (fingerprint == null ? 0 : 16));
      b.raw(id(new byte[8], groupId));
      for (int i = 0; i < dims.size(); i++) {
        if (dims.get(i).kind() != Dimension.Kind.RECIPIENT) {
          value(b, dims.get(i), values[i], fingerprint);
        }
      }
      return b.toByteArray();
    }
    if (!dims.contains(Dimension.CONTENT)) {
      return id(new byte[8], groupId);
    }
    return contentCounterKey(groupId, fingerprint);
  }

  /**
   * {@link #counterKey} of a recipient-partition group keyed by the recipient and the content only:
   * the group id and the fingerprint (without searching the key's dimensions on every decision).
   */
  static byte[] contentCounterKey(long groupId, byte[] fingerprint) {
    return contentCounterKey(groupId, fingerprint, new byte[8 + fingerprint.length]);
  }

  /** {@link #contentCounterKey(long, byte[])} written into {@code out}, {@code 8 + fingerprint.length} long. */
  static byte[] contentCounterKey(long groupId, byte[] fingerprint, byte[] out) {
    id(out, groupId);
    System.arraycopy(fingerprint, 0, out, 8, fingerprint.length);
    return out;
  }

  private static byte[] id(byte[] out, long groupId) {
    for (int i = 0; i < 8; i++) {
      out[i] = (byte) (groupId >>> (56 - 8 * i));
    }
    return out;
  }

  static long groupId(byte[] counterKey) {
    long id = 0;
    for (int i = 0; i < 8; i++) {
      id = (id << 8) | (counterKey[i] & 0xffL);
    }
    return id;
  }

  /** Decodes the values a recipient-partition counter key holds: dimension name to value (content as hex). */
  static Map<String, String> counterValues(byte[] counterKey, List<Dimension> dims) {
    Map<String, String> values = new LinkedHashMap<>();
    int at = 8;
    for (Dimension d : dims) {
      if (d.kind() == Dimension.Kind.RECIPIENT) {
        continue;
      }
      if (d.kind() == Dimension.Kind.CONTENT) {
        values.put("content", Fingerprint.hex(java.util.Arrays.copyOfRange(counterKey, at, at + 16)));
        at += 16;
      } else {
        int len = Varint.read(counterKey, at);
        at += Varint.size(len);
        values.put(d.toString(), new String(counterKey, at, len, StandardCharsets.UTF_8));
        at += len;
      }
    }
    return values;
  }

  private static void value(Buffer b, Dimension d, String value, byte[] fingerprint) {
    if (d.kind() == Dimension.Kind.CONTENT) {
      b.raw(fingerprint);
    } else {
      b.string(value);
    }
  }

  private static final class Buffer extends ByteArrayOutputStream {
    Buffer(int size) {
      super(size);
    }

    void raw(byte[] bytes) {
      write(bytes, 0, bytes.length);
    }

    void string(String s) {
      byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
      byte[] length = new byte[5];
      write(length, 0, Varint.write(length, 0, bytes.length));
      raw(bytes);
    }
  }
}
