package dev.fcap.store.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Test-side reader of the value of a partition key, written from the layout in docs/redis.md
 * (independently of the script): {@code counter*}, {@code counter := varint(idLen) id kind:u8
 * expires:i32 varint(stateLen) state}, the first of them the partition's time (kind {@link #CLOCK}, an
 * empty id, its state varint(back): the time is {@code expires} in ms minus back).
 *
 * @param latest the partition's time (epoch ms), null if the value has no CLOCK entry
 */
record StoredValue(Long latest, List<Counter> counters) {
  static final int GAPS = 4;
  static final int CLOCK = 120;
  /** The partition's time where its recipient has no suppression entry (Suppression.lua, "CLEAR"). */
  static final int CLEAR = 119;
  /** A remembered message id or release record kept inline in the value (partition.lua, "Where entries live"). */
  static final int ENTRY = 126;
  /** The marker of a value whose partition has entries in its hash. */
  static final int SPILLED = 121;

  /**
   * A field of a partition's entries hash (the partition key, then "\0M"): a remembered message id or
   * release record; the hash value is {@code expires:i32} then {@code state}.
   */
  record Entry(byte[] id, int expires, byte[] state) {
    static Entry parse(byte[] id, byte[] value) {
      ByteBuffer b = ByteBuffer.wrap(value);
      int expires = b.getInt();
      return new Entry(id, expires, Arrays.copyOfRange(value, 4, value.length));
    }
  }

  record Counter(byte[] id, int kind, int expires, byte[] state) {}

  static StoredValue parse(byte[] value) {
    ByteBuffer b = ByteBuffer.wrap(value);
    List<Counter> counters = new ArrayList<>();
    Long latest = null;
    while (b.hasRemaining()) {
      byte[] id = new byte[varint(b)];
      b.get(id);
      int kind = b.get() & 0xff;
      int expires = b.getInt();
      byte[] state = new byte[varint(b)];
      b.get(state);
      if ((kind == CLOCK || kind == CLEAR) && id.length == 0 && counters.isEmpty() && latest == null) {
        latest = 1_577_836_800_000L + expires * 1000L - varint(ByteBuffer.wrap(state));
      } else {
        counters.add(new Counter(id, kind, expires, state));
      }
    }
    return new StoredValue(latest, counters);
  }

  private static int varint(ByteBuffer b) {
    int v = 0;
    for (int shift = 0; ; shift += 7) {
      int c = b.get() & 0xff;
      v |= (c & 0x7f) << shift;
      if (c < 0x80) {
        return v;
      }
    }
  }

  /** The times of a gap-form state (newest first), expiring at {@code expires} seconds since 2020. */
  static long[] gapTimes(byte[] state, int expires) {
    ByteBuffer b = ByteBuffer.wrap(state);
    long t = 1_577_836_800_000L + expires * 1000L - (b.getInt() & 0xffffffffL);
    long[] times = new long[state.length];
    int n = 0;
    times[n++] = t;
    while (b.hasRemaining()) {
      int first = b.get() & 0xff;
      long gap = first & 0x3f;
      for (int k = 0; k < first >>> 6; k++) {
        gap = gap << 8 | (b.get() & 0xff);
      }
      t -= gap;
      times[n++] = t;
    }
    return Arrays.copyOf(times, n);
  }

  /** The stored kind of a large sliding log's descriptor (its entries are in block keys). */
  static final int LARGE = 5;

  /**
   * What a key is (docs/redis.md, "Keys"): {@code 'V'} a partition's value, {@code 'G'} a group's hash
   * (grouped layout), {@code 'M'} a partition's entries hash, {@code 'L'} a block of a large log,
   * {@code 'X'} anything else (the layout marker). A key derived from a partition is its NAME (its key,
   * or its group's key, '\0', the field's length as 4 bytes, the field) then "\0M" or "\0L".
   */
  static char kind(String key) {
    int close = key.indexOf('}');
    if (close < 0) {
      return 'X';
    }
    if (close == key.length() - 1) {
      return 'V';
    }
    if (key.charAt(close + 1) != 'G') {
      return key.charAt(close + 2);
    }
    if (close + 2 == key.length()) {
      return 'G';
    }
    int at = close + 3;
    int length = 0;
    for (int i = 0; i < 4; i++) {
      length = length << 8 | key.charAt(at + i);
    }
    return key.charAt(at + 4 + length + 1);
  }

  /** A grouped partition's name: its group's key, '\0', the field's length (4 bytes), the field. */
  static String groupedName(String groupKey, byte[] field) {
    int n = field.length;
    return groupKey + "\u0000" + (char) (n >>> 24) + (char) (n >>> 16 & 0xff) + (char) (n >>> 8 & 0xff) + (char) (n & 0xff)
        + new String(field, java.nio.charset.StandardCharsets.ISO_8859_1);
  }

  /**
   * Every partition's raw value in a standalone Redis, by its name (its key, or in the grouped layout
   * its group's key and field: {@link #groupedName}), a grouped value without its 4-byte expiry.
   */
  static Map<String, byte[]> rawValues(StatefulRedisConnection<byte[], byte[]> c) {
    Map<String, byte[]> values = new LinkedHashMap<>();
    for (byte[] key : c.sync().keys("*")) {
      String name = new String(key, java.nio.charset.StandardCharsets.ISO_8859_1);
      switch (kind(name)) {
        case 'V' -> values.put(name, c.sync().get(key));
        case 'G' -> c.sync().hgetall(key).forEach((field, value) ->
            values.put(groupedName(name, field), Arrays.copyOfRange(value, 4, value.length)));
        default -> { }
      }
    }
    return values;
  }

  /** The {@link #kind}s of every key of a standalone Redis. */
  static java.util.Set<Character> keyKinds(String uri) {
    RedisClient client = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE)) {
      java.util.Set<Character> kinds = new java.util.TreeSet<>();
      c.sync().keys("*").forEach(k -> kinds.add(kind(new String(k, java.nio.charset.StandardCharsets.ISO_8859_1))));
      return kinds;
    } finally {
      client.shutdown();
    }
  }

  /** Every partition of a standalone Redis and its parsed value, by its name (see {@link #rawValues}). */
  static Map<String, StoredValue> all(String uri) {
    RedisClient client = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE)) {
      Map<String, StoredValue> values = new LinkedHashMap<>();
      rawValues(c).forEach((name, value) -> values.put(name, parse(value)));
      return values;
    } finally {
      client.shutdown();
    }
  }

  /**
   * Every remembered entry of a standalone Redis, inline in a value or in an entries hash (key: the
   * partition's name, in ISO-8859-1).
   */
  static Map<String, List<Entry>> allEntries(String uri) {
    RedisClient client = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE)) {
      Map<String, List<Entry>> entries = new LinkedHashMap<>();
      for (byte[] key : c.sync().keys("*")) {
        String name = new String(key, java.nio.charset.StandardCharsets.ISO_8859_1);
        if (kind(name) == 'M') {
          List<Entry> list = entries.computeIfAbsent(name.substring(0, name.length() - 2), k -> new ArrayList<>());
          c.sync().hgetall(key).forEach((id, value) -> list.add(Entry.parse(id, value)));
        }
      }
      rawValues(c).forEach((name, value) -> {
        for (Counter inline : parse(value).counters()) {
          if (inline.kind() == ENTRY) {
            entries.computeIfAbsent(name, k -> new ArrayList<>()).add(new Entry(inline.id(), inline.expires(), inline.state()));
          }
        }
      });
      return entries;
    } finally {
      client.shutdown();
    }
  }
}
