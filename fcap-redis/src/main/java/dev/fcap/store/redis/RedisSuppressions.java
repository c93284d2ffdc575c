package dev.fcap.store.redis;

import dev.fcap.model.Suppression;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import dev.fcap.store.SuppressionList;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The suppression lists on Redis. An entry is one string beside its recipient's partition: its key
 * is the partition's name (its key, or in the grouped layout the group's key and the field) then
 * {@code "\0S"}, so it lies in the partition's slot and the partition script reads it in the
 * decision's own step (Suppression.lua): a PUT that answered is seen by the next decision on every
 * node, with no second round trip. The key has no TTL unless the entry expires ({@code PEXPIREAT}),
 * so Redis must not evict keys without one (docs/redis.md, "Suppression lists").
 *
 * <p>The value, big-endian: {@code expiresAt:i64 addedAt:i64 n:u8 (len:u16 channel)*n m:u8 (len:u16
 * category)*m byLen:u16 addedBy reason}, the reason taking the rest.
 *
 * <p>Listing by tenant would take a scan of the whole keyspace, so {@link #page} and {@link #size}
 * are not offered here.
 */
final class RedisSuppressions implements SuppressionList {
  static final byte[] SCRIPT = RedisStore.loadScript("suppression.lua");
  private static final String SHA = RedisStore.sha1(SCRIPT);
  /** Writes of an import sent before their answers are awaited. */
  private static final int IN_FLIGHT = 256;
  private static final byte[] PUT = bytes("put");
  private static final byte[] GET = bytes("get");
  private static final byte[] DEL = bytes("del");
  private final Backend backend;
  private final RedisKeys keys;
  private final Duration timeout;
  /** The store's clock (epoch ms): an entry read after its expiry is absent. */
  private final LongSupplier now;

  RedisSuppressions(Backend backend, RedisKeys keys, Duration timeout, LongSupplier now) {
    this.backend = backend;
    this.keys = keys;
    this.timeout = timeout;
    this.now = now;
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
    List<Object> reply = await(call(key(partition), GET), "suppression GET");
    if (reply.isEmpty()) {
      return Optional.empty();
    }
    Suppression s = decode(partition, (byte[]) reply.get(0));
    return s.expiredAt(now.getAsLong()) ? Optional.empty() : Optional.of(s);
  }

  @Override
  public boolean remove(String tenant, String recipient) {
    byte[] partition = SuppressionList.partitionOf(tenant, recipient);
    List<Object> reply = await(call(key(partition), DEL), "suppression DELETE");
    return ((Long) reply.get(0)) == 1;
  }

  @Override
  public List<Suppression> page(String tenant, String cursor, int limit) {
    throw new UnsupportedOperationException("the Redis store does not list suppression entries by tenant");
  }

  @Override
  public long size(String tenant) {
    throw new UnsupportedOperationException("the Redis store does not count suppression entries by tenant");
  }

  private CompletionStage<List<Object>> send(String tenant, Suppression e) {
    byte[] partition = SuppressionList.partitionOf(tenant, e.recipient());
    return call(key(partition), PUT, encode(e), bytes(Long.toString(e.expiresAt())));
  }

  /** The script by its digest; after a NOSCRIPT (the first call on a node, a flush) by its text, once. */
  private CompletionStage<List<Object>> call(byte[] key, byte[]... args) {
    return backend.evalsha(SHA, key, args).toCompletableFuture().exceptionallyCompose(e -> Failures.isNoScript(e)
        ? backend.eval(SCRIPT, key, args) : java.util.concurrent.CompletableFuture.failedFuture(e));
  }

  /** The entry's key: the partition's name (RedisKeys.lua's NAME) then {@code "\0S"}. */
  byte[] key(byte[] partition) {
    byte[] key = keys.key(partition);
    ByteArrayOutputStream out = new ByteArrayOutputStream(key.length + partition.length + 8);
    out.writeBytes(key);
    if (keys.grouped()) {
      out.write(0);
      out.writeBytes(ByteBuffer.allocate(4).putInt(partition.length).array());
      out.writeBytes(partition);
    }
    out.write(0);
    out.write('S');
    return out.toByteArray();
  }

  static byte[] encode(Suppression e) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    out.writeBytes(ByteBuffer.allocate(16).putLong(e.expiresAt()).putLong(e.addedAt()).array());
    list(out, e.channels());
    list(out, e.categories());
    string(out, e.addedBy());
    out.writeBytes(bytes(e.reason()));
    return out.toByteArray();
  }

  /** The entry stored for {@code partition} (a recipient partition: its recipient is the key's rest). */
  static Suppression decode(byte[] partition, byte[] value) {
    ByteBuffer b = ByteBuffer.wrap(value);
    long expiresAt = b.getLong();
    long addedAt = b.getLong();
    List<String> channels = list(b);
    List<String> categories = list(b);
    String addedBy = string(b);
    String reason = new String(value, b.position(), b.remaining(), StandardCharsets.UTF_8);
    return new Suppression(recipientOf(partition), channels, categories, reason, addedBy, addedAt, expiresAt);
  }

  /** The recipient a recipient partition names: what follows {@code 'r' varint(len) tenant}. */
  private static String recipientOf(byte[] partition) {
    int len = 0;
    int at = 1;
    for (int shift = 0; ; shift += 7) {
      int b = partition[at++];
      len |= (b & 0x7f) << shift;
      if (b >= 0) {
        break;
      }
    }
    at += len;
    return new String(partition, at, partition.length - at, StandardCharsets.UTF_8);
  }

  private static void list(ByteArrayOutputStream out, List<String> values) {
    out.write(values.size());
    for (String v : values) {
      string(out, v);
    }
  }

  private static void string(ByteArrayOutputStream out, String v) {
    byte[] b = bytes(v);
    out.write(b.length >>> 8);
    out.write(b.length);
    out.writeBytes(b);
  }

  private static List<String> list(ByteBuffer b) {
    int n = b.get() & 0xff;
    List<String> values = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      values.add(string(b));
    }
    return values;
  }

  private static String string(ByteBuffer b) {
    int len = b.getShort() & 0xffff;
    String s = new String(b.array(), b.position(), len, StandardCharsets.UTF_8);
    b.position(b.position() + len);
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
