package dev.fcap.engine;

import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.Varint;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Releasable decision ids: any node can route one to the release record it names, and nobody can
 * read the recipient out of it (decision ids end up in logs).
 *
 * <p><b>Design.</b> An id seals {@code expires:i32 recordKey[16] partitionKey} (the record's expiry
 * in seconds since 2020, rounded up like a stored entry's; the 16-byte key of the release record in
 * its partition; the partition key, which names the tenant) with a deterministic authenticated
 * cipher in the SIV style ({@link IdSealer}: the IV is the first 12 bytes of AES-CMAC over the plain
 * text, which is encrypted with AES-128-CTR under that IV). The same record always gets the same id
 * (a replayed message id answers its first decision's id without storing it), and any change to an
 * id fails the MAC: a forged or garbled id opens to null, never to another record. The id is
 * {@code "e" + base64url(iv ct)}: 45 characters plus 4/3 of the partition key.
 *
 * <p><b>Two forms.</b> The first names a record that holds the release (the counters to give back,
 * the decision's other partitions): a decision of several partitions, or one with a message id,
 * whose record must answer a retry with the whole result anyway. The second also seals the release:
 * {@code expires recordKey 0xFD varint(len) partitionKey decidedAt:i64 tail}, so the record in the
 * store is only the claim (16-byte key, time, a one-byte tail) and a release is one store step, not a
 * lookup and then a claim. A decision of one partition without a message id (the usual case) gets the
 * second form when it fits {@link #MAX_LENGTH}.
 *
 * <p><b>The third form</b> is the second for a decision the store kept <em>nothing</em> of (see
 * {@link dev.fcap.store.Idempotency}, "stored as nothing"): {@code expires claimKey 0xFC varint(len)
 * partitionKey decidedAt:i64 incarnation:i64 tail}. The 16-byte key is then where a release writes its
 * claim, and the partition's incarnation at the decision is what the release must find there. A store
 * that remembered the decision instead (one without incarnations, an outage store) answers
 * incarnation 0, and the decision gets the second form.
 *
 * <p><b>The key is held by the store</b>, so every node of a deployment shares it and a durable
 * store keeps it across restarts: 32 random bytes, remembered by a DECIDE of no counters in the
 * partition {@link #KEY_PARTITION} under a fixed message id, the tail holding the bytes. The first
 * node to ask stores its candidate; every later ask replays the first (the store's message-id step
 * is the SET NX). A degraded answer (an outage store) is not taken: the next decision asks again,
 * and until then ids are not releasable.
 */
final class DecisionIds {
  /** The partition that holds the key: a kind byte no tenant partition starts with. */
  static final byte[] KEY_PARTITION = "\0fcap/decision-id-key".getBytes(StandardCharsets.ISO_8859_1);
  private static final byte[] KEY_ID = new byte[16];
  /** Thirty years: the key outlives every id (at most 7 days) by far. */
  private static final long KEY_HORIZON_MS = 30L * 365 * 24 * 3600 * 1000;
  private static final long EPOCH_MS = 1_577_836_800_000L;
  private static final int HEAD = 4 + 16;
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  /**
   * The longest id: one that fits an HTTP/1 request line (4,096) with its path. A partition key of
   * more than about 2,900 bytes (a recipient of that many UTF-8 bytes) makes a longer id: such a
   * decision gets an id that is not releasable (release it by message id).
   */
  static final int MAX_LENGTH = 4000;

  /** Starts the second form's partition field: no partition key starts with it. */
  private static final byte SEALED_RELEASE = (byte) 0xFD;
  /** Starts the third form's partition field. */
  private static final byte STORED_AS_NOTHING = (byte) 0xFC;
  /** The longest plain text of an id of at most {@link #MAX_LENGTH} characters. */
  private static final int MAX_PLAIN = (MAX_LENGTH - 1) / 4 * 3 - IdSealer.IV;

  /**
   * What an id names: the record's expiry, its key, its partition and tenant, and, for the second
   * and third forms, the decision's time and the release record's tail (null: in the record), and
   * for the third the partition's incarnation (0: the second form).
   */
  record Opened(long expiresAtMs, byte[] recordKey, byte[] partition, String tenant, long decidedAt, byte[] tail,
      long incarnation) {}

  /**
   * Whether an id of the second or third form (8 bytes longer), with this partition key and tail, fits
   * {@link #MAX_LENGTH}.
   */
  static boolean sealsRelease(int partitionLength, int tailLength) {
    return HEAD + 1 + Varint.size(partitionLength) + partitionLength + 8 + 8 + tailLength <= MAX_PLAIN;
  }

  private final Store store;
  private volatile IdSealer sealer;
  private volatile CompletableFuture<IdSealer> loading;

  DecisionIds(Store store) {
    this.store = store;
  }

  /** Whether ids can be sealed and opened now. */
  boolean ready() {
    return sealer != null;
  }

  /** Loads the key from the store (once; again after a failed or degraded load). */
  CompletableFuture<?> load() {
    CompletableFuture<IdSealer> l = loading;
    if (sealer != null || (l != null && !l.isDone())) {
      return l == null ? CompletableFuture.completedFuture(null) : l;
    }
    synchronized (this) {
      if (loading == null || loading.isDone() && sealer == null) {
        byte[] candidate = new byte[32];
        new SecureRandom().nextBytes(candidate);
        PartitionRequest r = new PartitionRequest(KEY_PARTITION, Operation.DECIDE, PartitionRequest.STORE_TIME, 1,
            List.of(), 0, new Idempotency(KEY_ID, KEY_HORIZON_MS, candidate, true), null);
        CompletableFuture<PartitionResult> call;
        try {
          call = store.apply(r);
        } catch (RuntimeException e) { // a store that throws instead of failing its future
          call = CompletableFuture.failedFuture(e);
        }
        loading = call.thenApply(result -> {
          if (result.degraded()) {
            throw new StoreException(StoreException.Reason.UNAVAILABLE, "the decision-id key is in the store");
          }
          byte[] key = result.replayOf() == null ? candidate : result.replayOf().getBytes(StandardCharsets.ISO_8859_1);
          IdSealer s = new IdSealer(key);
          sealer = s;
          return s;
        });
      }
      return loading;
    }
  }

  /** The id of a release record, or null if the key is not loaded. */
  String seal(byte[] partition, byte[] recordKey, long expiresAtMs) {
    int length = HEAD + partition.length;
    IdSealer.Work w = work(length);
    if (w == null) {
      return null;
    }
    byte[] text = w.text(length);
    System.arraycopy(partition, 0, text, head(text, IdSealer.IV, recordKey, expiresAtMs), partition.length);
    return w.seal(length);
  }

  /**
   * The id of the second form: it seals the release ({@code tail}, the decision's time) with the
   * record's place; null if the key is not loaded. Only for what {@link #sealsRelease} accepts.
   */
  String seal(byte[] partition, byte[] recordKey, long expiresAtMs, long decidedAt, byte[] tail) {
    return seal(partition, recordKey, expiresAtMs, decidedAt, 0, tail);
  }

  /**
   * The id of the third form ({@code incarnation} not 0: the store kept nothing of the decision), or
   * of the second (0).
   */
  String seal(byte[] partition, byte[] recordKey, long expiresAtMs, long decidedAt, long incarnation, byte[] tail) {
    int length = releaseLength(partition, incarnation, tail);
    IdSealer.Work w = work(length);
    if (w == null) {
      return null;
    }
    writeRelease(w.text(length), IdSealer.IV, partition, recordKey, expiresAtMs, decidedAt, incarnation, tail);
    return w.seal(length);
  }

  /**
   * The plain text of the id {@link #seal(byte[], byte[], long, long, long, byte[])} makes, for the
   * caller to seal when the id is first read ({@link #sealing}): written now (the arrays given may be
   * reused once this returns). Null if the key is not loaded or the id would pass {@link #MAX_LENGTH}.
   */
  byte[] plainToSealOnRead(byte[] partition, byte[] recordKey, long expiresAtMs, long decidedAt, long incarnation,
      byte[] tail) {
    int length = releaseLength(partition, incarnation, tail);
    if (sealer == null || IdSealer.idLength(length) > MAX_LENGTH) {
      return null;
    }
    byte[] plain = new byte[length];
    writeRelease(plain, 0, partition, recordKey, expiresAtMs, decidedAt, incarnation, tail);
    return plain;
  }

  /**
   * What seals a plain text from {@link #plainToSealOnRead} into its id, from any thread, under the key
   * (loaded once, never replaced: one function for every decision); null before the key is loaded.
   */
  Function<byte[], String> sealing() {
    IdSealer s = sealer;
    return s == null ? null : s.sealing;
  }

  private static int releaseLength(byte[] partition, long incarnation, byte[] tail) {
    return HEAD + 1 + Varint.size(partition.length) + partition.length + 8 + (incarnation == 0 ? 0 : 8) + tail.length;
  }

  /** Writes the plain text of the second or third form into {@code text} from {@code at}. */
  private static void writeRelease(byte[] text, int at, byte[] partition, byte[] recordKey, long expiresAtMs,
      long decidedAt, long incarnation, byte[] tail) {
    int i = head(text, at, recordKey, expiresAtMs);
    text[i++] = incarnation == 0 ? SEALED_RELEASE : STORED_AS_NOTHING;
    i = Varint.write(text, i, partition.length);
    System.arraycopy(partition, 0, text, i, partition.length);
    i += partition.length;
    LONG.set(text, i, decidedAt);
    i += 8;
    if (incarnation != 0) {
      LONG.set(text, i, incarnation);
      i += 8;
    }
    System.arraycopy(tail, 0, text, i, tail.length);
  }

  /**
   * This thread's sealing work for a plain text of {@code length} bytes; null if the key is not
   * loaded or the id would pass {@link #MAX_LENGTH}.
   */
  private IdSealer.Work work(int length) {
    IdSealer s = sealer;
    return s == null || IdSealer.idLength(length) > MAX_LENGTH ? null : s.work();
  }

  /** Writes the expiry and the record key into {@code text} from {@code at}; where the plain text goes on. */
  private static int head(byte[] text, int at, byte[] recordKey, long expiresAtMs) {
    long seconds = -Math.floorDiv(-(expiresAtMs - EPOCH_MS), 1000);
    INT.set(text, at, (int) Math.max(0, Math.min(Integer.MAX_VALUE, seconds)));
    System.arraycopy(recordKey, 0, text, at + 4, 16);
    return at + HEAD;
  }

  /** What {@code id} names, or null if it is not an id sealed with this deployment's key. */
  Opened open(String id) {
    IdSealer s = sealer;
    if (s == null || id == null || id.length() > MAX_LENGTH) {
      return null;
    }
    byte[] plain = s.open(id);
    if (plain == null || plain.length < HEAD + 2) {
      return null;
    }
    ByteBuffer b = ByteBuffer.wrap(plain);
    long expiresAt = EPOCH_MS + (b.getInt() & 0xFFFF_FFFFL) * 1000;
    byte[] recordKey = new byte[16];
    b.get(recordKey);
    if (plain[HEAD] != SEALED_RELEASE && plain[HEAD] != STORED_AS_NOTHING) {
      byte[] partition = Arrays.copyOfRange(plain, HEAD, plain.length);
      String tenant = Keys.tenantOf(partition);
      return tenant == null ? null : new Opened(expiresAt, recordKey, partition, tenant, 0, null, 0);
    }
    int extra = plain[HEAD] == STORED_AS_NOTHING ? 8 : 0;
    int len = Varint.read(plain, HEAD + 1);
    int at = HEAD + 1 + Varint.size(len);
    if (len < 2 || len > plain.length - at - 8 - extra - 1) {
      return null; // the MAC held, so only a bug writes this: refuse rather than misread
    }
    byte[] partition = Arrays.copyOfRange(plain, at, at + len);
    ByteBuffer times = ByteBuffer.wrap(plain, at + len, 8 + extra);
    long decidedAt = times.getLong();
    long incarnation = extra == 0 ? 0 : times.getLong();
    if (extra != 0 && incarnation == 0) {
      return null;
    }
    byte[] tail = Arrays.copyOfRange(plain, at + len + 8 + extra, plain.length);
    String tenant = Keys.tenantOf(partition);
    return tenant == null ? null : new Opened(expiresAt, recordKey, partition, tenant, decidedAt, tail, incarnation);
  }
}
