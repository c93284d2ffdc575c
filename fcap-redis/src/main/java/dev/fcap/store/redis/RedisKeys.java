package dev.fcap.store.redis;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The Redis key of a partition: {@code prefix '{' escape(partition) '}'}; in the grouped layout
 * ({@code groups > 0}) the key of the hash that holds the partition's group, {@code prefix '{' 'g'
 * decimal(group) '}' 'G'}, the partition being its field.
 *
 * <p><b>Why this is injective and slot-safe.</b> {@code escape} replaces the three bytes
 * {@code \ { }} by the pairs {@code \\ \( \)} and leaves every other byte alone; it is a prefix-free
 * code, so it is injective, and its output holds no brace. Redis hashes the bytes between the first
 * {@code '{'} of a key and the first {@code '}'} after it: the prefix holds no brace (checked), so
 * that is exactly {@code escape(partition)}, which is never empty (a partition key has at least its
 * kind byte). Hence a partition's slot depends on the partition alone, whatever its ids contain
 * (braces, colons, spaces, any unicode, any length), and two partitions never share a key.
 */
final class RedisKeys {
  static final byte ESCAPE = '\\';

  private final byte[] prefix;
  private final int groups;

  RedisKeys(String prefix) {
    this(prefix, 0);
  }

  /** Keys under {@code prefix}; {@code groups} groups (RedisStore.Builder checks it), or 0 for a key per partition. */
  RedisKeys(String prefix, int groups) {
    if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
      throw new IllegalArgumentException("keyPrefix must not contain '{' or '}': the braces delimit the hash tag");
    }
    this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
    this.groups = groups;
  }

  boolean grouped() {
    return groups > 0;
  }

  /** How many groups hold the partitions; 0 for a key per partition. */
  int groups() {
    return groups;
  }

  /** The prefix every key of the store starts with. */
  byte[] prefix() {
    return prefix.clone();
  }

  /**
   * The key a partition's script call names: its own, or its group's hash. A group key ends with
   * {@code "}G"}, where a partition key ends with {@code '}'} and the keys derived from one continue
   * with {@code '\0'}, so no group key is any other key of the store.
   */
  byte[] key(byte[] partition) {
    if (partition.length == 0) {
      throw new IllegalArgumentException("empty partition key");
    }
    if (groups > 0) {
      String group = "{g" + group(partition, groups) + "}G";
      byte[] k = java.util.Arrays.copyOf(prefix, prefix.length + group.length());
      System.arraycopy(group.getBytes(StandardCharsets.US_ASCII), 0, k, prefix.length, group.length());
      return k;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(prefix.length + partition.length + 8);
    out.write(prefix, 0, prefix.length);
    out.write('{');
    for (byte b : partition) {
      switch (b) {
        case ESCAPE -> {
          out.write(ESCAPE);
          out.write(ESCAPE);
        }
        case '{' -> {
          out.write(ESCAPE);
          out.write('(');
        }
        case '}' -> {
          out.write(ESCAPE);
          out.write(')');
        }
        default -> out.write(b);
      }
    }
    out.write('}');
    return out.toByteArray();
  }

  /**
   * The group of a partition among {@code groups}: FNV-1a over its bytes, then MurmurHash3's 64-bit
   * finalizer (FNV alone leaves the low bits of similar keys close), modulo {@code groups}. Part of
   * the stored layout: changing it (or the count) would read every partition from another group.
   */
  static int group(byte[] partition, int groups) {
    return (int) Long.remainderUnsigned(mix(partition, 0xcbf29ce484222325L), groups);
  }

  /**
   * FNV-1a over {@code bytes} from the offset basis {@code basis}, then MurmurHash3's 64-bit
   * finalizer. Every layout that places a key by it stores by it: its values never change.
   */
  static long mix(byte[] bytes, long basis) {
    long h = basis;
    for (byte b : bytes) {
      h = (h ^ (b & 0xff)) * 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }

  /** The inverse of {@link #key}, for tests and tools; throws on a key this class did not write. */
  byte[] partition(byte[] key) {
    int start = prefix.length + 1;
    if (key.length < start + 2 || key[start - 1] != '{' || key[key.length - 1] != '}') {
      throw new IllegalArgumentException("not an fcap partition key");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(key.length);
    for (int i = start; i < key.length - 1; i++) {
      byte b = key[i];
      if (b == '{' || b == '}') {
        throw new IllegalArgumentException("unescaped brace in partition key");
      }
      if (b != ESCAPE) {
        out.write(b);
        continue;
      }
      byte next = key[++i];
      out.write(next == ESCAPE ? ESCAPE : next == '(' ? '{' : next == ')' ? '}' : fail());
    }
    return out.toByteArray();
  }

  private static byte fail() {
    throw new IllegalArgumentException("bad escape in partition key");
  }
}
