package dev.fcap.store.redis;

import dev.fcap.model.Suppression;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.Varint;
import io.lettuce.core.cluster.SlotHash;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The suppression lists on Redis.
 *
 * <p><b>Design.</b> A tenant's entries live in {@link #BUCKETS} small hashes ("buckets"), field the
 * recipient, value the compact entry. A recipient's bucket lies in the cluster slot of its
 * partition: its key carries a hash tag of that slot ({@link #TAGS}: a short string per slot) or,
 * in the grouped layout, the group's own tag; so the partition script reads the entry in the
 * decision's own step (Suppression.lua, one {@code HGET}), and a PUT that answered is seen by the
 * next decision on every node. Buckets stay small (about 19 entries each at 10^7 entries): they
 * are listpacks, where an entry costs its two strings and a few bytes (a key per entry costs about
 * 100 bytes more). A listpack is searched field by field, and a miss compares them all (19 fields
 * cost more than the whole rest of the check); so a bucket's first field, {@code ""}, holds a
 * filter of its recipients (two bits each of {@link #FILTER_BITS}), and the decision reads the
 * recipient's field only where both its bits are set. A bucket has no TTL: an entry's expiry is in its value, every read judges
 * it, and the PUT that finds the bucket's earliest expiry passed sweeps the bucket (the field
 * {@code ""}, which no recipient can be, keeps that expiry after the filter). So Redis must not evict keys without a
 * TTL (docs/redis.md, "Suppression lists").
 *
 * <p>Listing and counting walk the tenant's buckets, a script call per range of them (on a cluster
 * within one tag, whose buckets share a slot): the order is the buckets', then the recipients'
 * within a bucket, and since a recipient's bucket follows from it, the recipient listed last is a
 * stable cursor.
 *
 * <p>The value: {@code varint(expiresAt, 0 never) zigzag-varint(addedAt) varint(n) (varint(len)
 * channel)*n varint(m) (varint(len) category)*m varint(len) addedBy reason}, the reason taking the
 * rest; at least 9 bytes (a short one pads addedAt's varint), so that a decision's reply that ends
 * with it is told apart from one that ends with an 8-byte incarnation.
 */
final class RedisSuppressions implements SuppressionList {
  static final byte[] SCRIPT = RedisStore.loadScript("suppression.lua");
  private static final String SHA = RedisStore.sha1(SCRIPT);
  /**
   * A tenant's buckets: at 10^7 entries about 19 each, so that the decision's {@code HGET} (a linear
   * search of the listpack) stays short, while the bucket's key, shared by 19, costs about 8 bytes an entry.
   */
  static final int BUCKETS = 1 << 19;
  /** Cluster slots: the tags of the layout with a key per partition. */
  private static final int SLOTS = 16384;
  /** Per slot, a short string whose CRC16 lands in it. */
  private static final byte[][] TAGS = slotTags();
  /**
   * From this many groups on, the grouped layout's buckets take the slots' tags: its group keys then
   * cover nearly every slot (98 %), so the buckets per slot stay near full.
   */
  static final int BY_GROUP_BELOW = 4 * SLOTS;
  /** Writes of an import sent before their answers are awaited. */
  private static final int IN_FLIGHT = 256;
  /** Buckets a walk sends calls for before it awaits their answers. */
  private static final int WALK_STEP = 16_384;
  /** The most buckets one walk call covers: about half a millisecond of the script, so a walk never holds Redis long. */
  private static final int CALL_BUCKETS = 2048;
  private static final int MIN_ENTRY = 9;
  /** The bits of a bucket's filter (its field {@code ""}): two per entry, about 2 % false positives at 19 entries. */
  static final int FILTER_BITS = 256;
  private static final byte[] PUT = bytes("put");
  private static final byte[] GET = bytes("get");
  private static final byte[] DEL = bytes("del");
  private static final byte[] LIST = bytes("list");
  private static final byte[] COUNT = bytes("count");
  private final Backend backend;
  private final RedisKeys keys;
  private final Duration timeout;
  /** The store's clock (epoch ms): an entry read after its expiry is absent. */
  private final LongSupplier now;
  /**
   * Whether the buckets carry the groups' tags: in the grouped layout with fewer groups than
   * {@link #BY_GROUP_BELOW}, whose partitions meet in too few slots for a tag per slot.
   */
  private final boolean byGroup;
  /** Hash tags of the buckets: a slot's each, or a group's each. */
  private final int tags;
  private final byte[] prefix;
  /** Whether the buckets lie on several masters: a walk call then stays within one tag (one slot). */
  private final boolean cluster;
  /** Buckets per tag and tenant. */
  private final int perTag;

  RedisSuppressions(Backend backend, RedisKeys keys, Duration timeout, LongSupplier now) {
    this.backend = backend;
    this.keys = keys;
    this.timeout = timeout;
    this.now = now;
    this.byGroup = keys.grouped() && keys.groups() < BY_GROUP_BELOW;
    this.tags = byGroup ? keys.groups() : SLOTS;
    this.perTag = Math.max(1, (BUCKETS + tags - 1) / tags);
    this.prefix = keys.prefix();
    this.cluster = backend instanceof ClusterBackend;
  }

  @Override
  public boolean checkedInStep() {
    return true;
  }

  @Override
  public Suppression find(String tenant, String recipient, String channel, String category, long now) {
    return null; // read in the step (checkedInStep)
  }

  @Override
  public void put(String tenant, Suppression entry) {
    await(send(tenant, entry), "suppression PUT");
  }

  /**
   * Sends the entries {@link #IN_FLIGHT} at a time (Lettuce pipelines them on its connection) and
   * waits for each window: a whole batch at once would keep its last commands waiting past the
   * command timeout behind the first ones.
   */
  @Override
  public void putAll(String tenant, List<Suppression> entries) {
    List<CompletionStage<List<Object>>> sent = new ArrayList<>(IN_FLIGHT);
    for (int i = 0; i < entries.size(); i += IN_FLIGHT) {
      for (Suppression e : entries.subList(i, Math.min(entries.size(), i + IN_FLIGHT))) {
        sent.add(send(tenant, e));
      }
      for (CompletionStage<List<Object>> s : sent) {
        await(s, "suppression PUT");
      }
      sent.clear();
    }
  }

  @Override
  public Optional<Suppression> get(String tenant, String recipient) {
    byte[] partition = SuppressionList.partitionOf(tenant, recipient);
    List<Object> reply = await(call(bucketKey(tenant, bucket(partition)), GET, bytes(recipient)), "suppression GET");
    if (reply.isEmpty()) {
      return Optional.empty();
    }
    Suppression s = decode(recipient, (byte[]) reply.get(0));
    return s.expiredAt(now.getAsLong()) ? Optional.empty() : Optional.of(s);
  }

  @Override
  public boolean remove(String tenant, String recipient) {
    byte[] partition = SuppressionList.partitionOf(tenant, recipient);
    List<Object> reply = await(call(bucketKey(tenant, bucket(partition)), DEL, bytes(recipient)),
        "suppression DELETE");
    return !reply.isEmpty() && !decode(recipient, (byte[]) reply.get(0)).expiredAt(now.getAsLong());
  }

  /**
   * Up to {@code limit} live entries after {@code cursor}, in bucket order then recipient order
   * within a bucket: a walk of the tenant's buckets from the cursor's, a step of buckets at a time
   * that doubles from 32 to {@link #WALK_STEP} while the steps come back short of the page.
   */
  @Override
  public List<Suppression> page(String tenant, String cursor, int limit) {
    List<Suppression> page = new ArrayList<>(Math.min(limit, 1024));
    if (limit <= 0) {
      return page;
    }
    int from = cursor == null ? 0 : bucket(SuppressionList.partitionOf(tenant, cursor));
    long at = now.getAsLong();
    int width = 32;
    for (int b = from; b < tags * perTag && page.size() < limit; ) {
      int end = Math.min(tags * perTag, b + width);
      List<int[]> ranges = calls(b, end);
      List<CompletionStage<List<Object>>> sent = new ArrayList<>(ranges.size());
      for (int[] r : ranges) {
        sent.add(walk(tenant, r[0], r[1], LIST));
      }
      for (int i = 0; i < sent.size() && page.size() < limit; i++) {
        List<Object> buckets = await(sent.get(i), "suppression LIST");
        for (int j = 0; j < buckets.size() && page.size() < limit; j++) {
          int bucket = ranges.get(i)[0] + j;
          collect(page, limit, (List<?>) buckets.get(j), bucket == from ? cursor : null, at);
        }
      }
      b = end;
      width = Math.min(WALK_STEP, width * 2);
    }
    return page;
  }

  /** Adds the live entries of one bucket's {@code HGETALL} after {@code after} (null: all), in recipient order. */
  private static void collect(List<Suppression> page, int limit, List<?> fields, String after, long now) {
    List<Suppression> found = new ArrayList<>(fields.size() / 2);
    for (int i = 0; i + 1 < fields.size(); i += 2) {
      byte[] field = (byte[]) fields.get(i);
      if (field.length == 0) {
        continue; // the bucket's earliest expiry
      }
      String recipient = new String(field, StandardCharsets.UTF_8);
      Suppression s = decode(recipient, (byte[]) fields.get(i + 1));
      if ((after == null || recipient.compareTo(after) > 0) && !s.expiredAt(now)) {
        found.add(s);
      }
    }
    found.sort(Comparator.comparing(Suppression::recipient));
    page.addAll(found.subList(0, Math.min(found.size(), limit - page.size())));
  }

  /**
   * Every entry of {@code tenant}'s buckets, expired ones included until a write sweeps them: one
   * {@code HLEN} per bucket, the calls of {@link #WALK_STEP} buckets in flight at a time, so it
   * costs a walk, not a lookup.
   */
  @Override
  public long size(String tenant) {
    long total = 0;
    for (int b = 0; b < tags * perTag; b += WALK_STEP) {
      List<CompletionStage<List<Object>>> sent = new ArrayList<>();
      for (int[] r : calls(b, Math.min(tags * perTag, b + WALK_STEP))) {
        sent.add(walk(tenant, r[0], r[1], COUNT));
      }
      for (CompletionStage<List<Object>> s : sent) {
        total += (Long) await(s, "suppression COUNT").get(0);
      }
    }
    return total;
  }

  /**
   * Buckets {@code [from, to)} cut into the ranges of one walk call each: at most {@link
   * #CALL_BUCKETS}, and on a cluster within one tag (one slot).
   */
  private List<int[]> calls(int from, int to) {
    List<int[]> ranges = new ArrayList<>();
    for (int b = from; b < to; ) {
      int end = Math.min(to, b + CALL_BUCKETS);
      if (cluster) {
        end = Math.min(end, (b / perTag + 1) * perTag);
      }
      ranges.add(new int[] {b, end});
      b = end;
    }
    return ranges;
  }

  /**
   * One script call over buckets {@code [from, to)}: its key is the first bucket, which routes it;
   * its arguments the op, the keys' common tail ({@code ':' tenant}), then per tag its head
   * ({@code prefix '{' tag '}' 'S'}) and its range of buckets, from which the script names them.
   */
  private CompletionStage<List<Object>> walk(String tenant, int from, int to, byte[] op) {
    byte[] t = bytes(tenant);
    List<byte[]> args = new ArrayList<>();
    args.add(op);
    byte[] tail = new byte[1 + t.length];
    tail[0] = ':';
    System.arraycopy(t, 0, tail, 1, t.length);
    args.add(tail);
    for (int b = from; b < to; ) {
      int tag = b / perTag;
      int end = Math.min(to, (tag + 1) * perTag);
      byte[] name = tag(tag);
      byte[] head = Arrays.copyOf(prefix, prefix.length + name.length + 3);
      head[prefix.length] = '{';
      System.arraycopy(name, 0, head, prefix.length + 1, name.length);
      head[head.length - 2] = '}';
      head[head.length - 1] = 'S';
      args.add(head);
      args.add(bytes(Integer.toString(b - tag * perTag)));
      args.add(bytes(Integer.toString(end - tag * perTag)));
      b = end;
    }
    return call(bucketKey(tenant, from), args.toArray(new byte[0][]));
  }

  /**
   * One PUT; it also names the recipient's partition (its key, and in the grouped layout its field),
   * whose mark of a recipient without an entry the script clears in the same step.
   */
  private CompletionStage<List<Object>> send(String tenant, Suppression e) {
    byte[] partition = SuppressionList.partitionOf(tenant, e.recipient());
    byte[] key = keys.key(partition);
    byte[] expires = bytes(Long.toString(e.expiresAt()));
    byte[] at = bytes(Long.toString(now.getAsLong()));
    byte[] bucket = bucketKey(tenant, bucket(partition, key));
    return keys.grouped()
        ? call(bucket, PUT, bytes(e.recipient()), encode(e), expires, at, filterBits(partition), key, partition)
        : call(bucket, PUT, bytes(e.recipient()), encode(e), expires, at, filterBits(partition), key);
  }

  /** The script by its digest; after a NOSCRIPT (the first call on a node, a flush) by its text, once. */
  private CompletionStage<List<Object>> call(byte[] key, byte[]... args) {
    return backend.evalsha(SHA, key, args).toCompletableFuture().exceptionallyCompose(e -> Failures.isNoScript(e)
        ? backend.eval(SCRIPT, key, args) : CompletableFuture.failedFuture(e));
  }

  /**
   * The bucket of a recipient partition ({@code 'r' varint(len) tenant recipient}), in [0, {@link
   * #BUCKETS}): its tag (the slot of the partition's key, or its group: {@link #byGroup}) times the buckets per tag,
   * plus a hash of the partition independent of the tag.
   */
  int bucket(byte[] partition) {
    return bucket(partition, keys.key(partition));
  }

  /** {@link #bucket(byte[])} of a partition whose key ({@link RedisKeys#key}) is {@code key}. */
  private int bucket(byte[] partition, byte[] key) {
    int tag = byGroup ? RedisKeys.group(partition, tags) : SlotHash.getSlot(key);
    return tag * perTag + sub(partition, perTag);
  }

  /**
   * What a decision's scope names (RedisRequests): {@code len:u16 bucketKey bit:u8 bit:u8
   * recipient}, the recipient's two bits in the bucket's filter, the recipient being the rest of the
   * bytes; {@code key} is the partition's key. Written straight
   * into one array: it is built for every decision.
   */
  byte[] entryOf(byte[] partition, byte[] key) {
    int tenantLength = Varint.read(partition, 1);
    int at = 1 + Varint.size(tenantLength);
    int bucket = bucket(partition, key);
    byte[] tag = tag(bucket / perTag);
    int sub = bucket % perTag;
    int subDigits = sub < 10 ? 1 : Integer.toString(sub).length();
    int keyLength = prefix.length + tag.length + 4 + subDigits + tenantLength;
    int recipient = at + tenantLength;
    byte[] out = new byte[4 + keyLength + partition.length - recipient];
    out[0] = (byte) (keyLength >>> 8);
    out[1] = (byte) keyLength;
    int p = bucketKey(out, 2, tag, sub, subDigits);
    System.arraycopy(partition, at, out, p, tenantLength);
    p += tenantLength;
    byte[] bits = filterBits(partition);
    out[p] = bits[0];
    out[p + 1] = bits[1];
    System.arraycopy(partition, recipient, out, p + 2, partition.length - recipient);
    return out;
  }

  /**
   * {@code prefix '{' tag '}' 'S' decimal(sub) ':' tenant}: the tag puts it in its recipients' slot;
   * {@code "}S"} sets it apart from a partition key (which ends at its {@code '}'} or goes on with
   * {@code '\0'}) and a group key ({@code "}G"}); the decimal ends at {@code ':'}, so the tenant,
   * which may hold any byte, is the rest.
   */
  byte[] bucketKey(String tenant, int bucket) {
    byte[] t = bytes(tenant);
    byte[] tag = tag(bucket / perTag);
    int sub = bucket % perTag;
    int subDigits = Integer.toString(sub).length();
    byte[] out = new byte[prefix.length + tag.length + 4 + subDigits + t.length];
    System.arraycopy(t, 0, out, bucketKey(out, 0, tag, sub, subDigits), t.length);
    return out;
  }

  /** Writes a bucket key but its tenant into {@code out} from {@code at}; where the tenant goes. */
  private int bucketKey(byte[] out, int at, byte[] tag, int sub, int subDigits) {
    System.arraycopy(prefix, 0, out, at, prefix.length);
    at += prefix.length;
    out[at++] = '{';
    System.arraycopy(tag, 0, out, at, tag.length);
    at += tag.length;
    out[at++] = '}';
    out[at++] = 'S';
    for (int i = subDigits - 1; i >= 0; i--, sub /= 10) {
      out[at + i] = (byte) ('0' + sub % 10);
    }
    at += subDigits;
    out[at++] = ':';
    return at;
  }

  private byte[] tag(int tag) {
    return byGroup ? bytes("g" + tag) : TAGS[tag];
  }

  /**
   * A partition's bucket within its tag: {@link #hash} modulo {@code n}; so it does not follow the
   * group. Part of the stored layout.
   */
  static int sub(byte[] partition, int n) {
    return (int) Long.remainderUnsigned(hash(partition), n);
  }

  /**
   * The two bits of a partition's recipient in its bucket's filter ({@link #FILTER_BITS}): bytes 5
   * and 6 of {@link #hash}, which the bucket (its low bits) does not use. Part of the stored layout.
   */
  static byte[] filterBits(byte[] partition) {
    long h = hash(partition);
    return new byte[] {(byte) (h >>> 40), (byte) (h >>> 48)};
  }

  /** {@link RedisKeys#mix} from another offset basis than {@link RedisKeys#group}'s. */
  private static long hash(byte[] partition) {
    return RedisKeys.mix(partition, 0x9e3779b97f4a7c15L);
  }

  /** For each cluster slot the first of the alphanumeric strings of one to three characters that hashes to it. */
  private static byte[][] slotTags() {
    byte[] alphabet = bytes("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
    byte[][] tags = new byte[SLOTS][];
    int found = 0;
    for (int length = 1; length <= 3 && found < SLOTS; length++) {
      int[] digits = new int[length];
      while (true) {
        byte[] tag = new byte[length];
        for (int i = 0; i < length; i++) {
          tag[i] = alphabet[digits[i]];
        }
        int slot = SlotHash.getSlot(tag);
        if (tags[slot] == null) {
          tags[slot] = tag;
          found++;
        }
        int i = length - 1;
        while (i >= 0 && ++digits[i] == alphabet.length) {
          digits[i--] = 0;
        }
        if (i < 0) {
          break;
        }
      }
    }
    if (found < SLOTS) {
      throw new IllegalStateException("no short hash tag for some cluster slot");
    }
    return tags;
  }

  static byte[] encode(Suppression e) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(32);
    varint(out, e.expiresAt() == Suppression.NEVER ? 0 : e.expiresAt());
    byte[] rest = rest(e);
    long added = (e.addedAt() << 1) ^ (e.addedAt() >> 63);
    int size = out.size() + varintSize(added) + rest.length;
    paddedVarint(out, added, Math.max(0, MIN_ENTRY - size));
    out.writeBytes(rest);
    return out.toByteArray();
  }

  private static byte[] rest(Suppression e) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(32);
    list(out, e.channels());
    list(out, e.categories());
    string(out, e.addedBy());
    out.writeBytes(bytes(e.reason()));
    return out.toByteArray();
  }

  /** The entry stored for {@code partition} (a recipient partition: its recipient is the key's rest). */
  static Suppression decode(byte[] partition, byte[] value) {
    return decode(recipientOf(partition), value);
  }

  static Suppression decode(String recipient, byte[] value) {
    int[] at = {0};
    long expiresAt = varint(value, at);
    long zigzag = varint(value, at);
    long addedAt = (zigzag >>> 1) ^ -(zigzag & 1);
    List<String> channels = list(value, at);
    List<String> categories = list(value, at);
    String addedBy = string(value, at);
    String reason = new String(value, at[0], value.length - at[0], StandardCharsets.UTF_8);
    return new Suppression(recipient, channels, categories, reason, addedBy, addedAt,
        expiresAt == 0 ? Suppression.NEVER : expiresAt);
  }

  /** The recipient a recipient partition names: what follows {@code 'r' varint(len) tenant}. */
  private static String recipientOf(byte[] partition) {
    int tenantLength = Varint.read(partition, 1);
    int at = 1 + Varint.size(tenantLength) + tenantLength;
    return new String(partition, at, partition.length - at, StandardCharsets.UTF_8);
  }

  private static void varint(ByteArrayOutputStream out, long v) {
    paddedVarint(out, v, 0);
  }

  /** {@code v} as a varint, with {@code pad} more bytes than it needs (continuation bytes of zero bits). */
  private static void paddedVarint(ByteArrayOutputStream out, long v, int pad) {
    int bytes = varintSize(v) + pad;
    for (int i = 1; i < bytes; i++) {
      out.write((int) (v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static int varintSize(long v) {
    int n = 1;
    while ((v >>>= 7) != 0) {
      n++;
    }
    return n;
  }

  private static long varint(byte[] b, int[] at) {
    long v = 0;
    for (int shift = 0; ; shift += 7) {
      int x = b[at[0]++];
      v |= (long) (x & 0x7f) << shift;
      if (x >= 0) {
        return v;
      }
    }
  }

  private static void list(ByteArrayOutputStream out, List<String> values) {
    varint(out, values.size());
    for (String v : values) {
      string(out, v);
    }
  }

  private static void string(ByteArrayOutputStream out, String v) {
    byte[] b = bytes(v);
    varint(out, b.length);
    out.writeBytes(b);
  }

  private static List<String> list(byte[] b, int[] at) {
    int n = (int) varint(b, at);
    List<String> values = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      values.add(string(b, at));
    }
    return values;
  }

  private static String string(byte[] b, int[] at) {
    int len = (int) varint(b, at);
    String s = new String(b, at[0], len, StandardCharsets.UTF_8);
    at[0] += len;
    return s;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private <T> T await(CompletionStage<T> stage, String what) {
    try {
      return stage.toCompletableFuture().get(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreException(Reason.UNAVAILABLE, what + " interrupted", e);
    } catch (Exception e) {
      throw Failures.map(e, what);
    }
  }
}
