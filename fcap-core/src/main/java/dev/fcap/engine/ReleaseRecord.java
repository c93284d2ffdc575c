package dev.fcap.engine;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.Varint;
import dev.fcap.store.internal.ReusableRequest;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;

/**
 * What a release record holds besides the decision's time: the bytes the engine stores as the tail
 * of the entry ({@link dev.fcap.store.Idempotency#tail()}), opaque to the stores.
 *
 * <pre>
 * tail    := releasable:u8 varint64(cost) varint(n) counter{n} varint(m) (varint(len) partitionKey){m}
 *            [varint(len) zoneId] [othersKey:16]   (releasable: 1, plus 2 with the zone, plus 4 with the key)
 * counter := algorithm:u8 varint(len) counterKey
 * </pre>
 *
 * The counters are this partition's (a release counts them by the rules in force then, found by
 * the group id that starts each counter key); the partition keys are those of the decision's other
 * partitions, listed in the first partition's record only. A policy keyed by the recipient and the
 * content costs about 40 bytes here; one of 12 rules over three partitions about 300 (up to 255
 * bytes were allowed at first, and the oracle found such decisions answered {@code unknown}). A
 * tail longer than {@link dev.fcap.store.Idempotency#MAX_TAIL} bytes (hundreds of rules applying to
 * one message) is stored as the single byte 0: not releasable by decision id ({@code unknown}).
 *
 * <p>A partition with a {@code zone: recipient} calendar counts the message in the period of the
 * message's own zone, which nothing else remembers: its record carries that zone's id, so that a
 * release gives the unit back to the period that holds it. A decision with a message id over several
 * partitions keeps its records in the others under a random key of its own ({@code othersKey}, listed
 * in the first's; {@link #keyIn}), not under the message id's: the id may come again (another
 * recipient's, or this one's after a reset) while a shared partition still remembers the first.
 */
record ReleaseRecord(long cost, List<CounterRequest> counters, List<byte[]> others, ZoneId zone, byte[] othersKey) {
  static final byte[] NOT_RELEASABLE = {0};
  /** The tail of a record whose decision id seals the release: the record is only the claim. */
  static final byte[] IN_ID = {2};
  /** Per zone, its id's bytes (read only): a tail in the message's zone is written per admitted decision. */
  private static final java.util.concurrent.ConcurrentHashMap<ZoneId, byte[]> ZONE_IDS =
      new java.util.concurrent.ConcurrentHashMap<>();
  private static final int RELEASABLE = 1;
  private static final int WITH_ZONE = 2;
  private static final int WITH_OTHERS_KEY = 4;
  private static final Algorithm[] ALGORITHMS = Algorithm.values();

  /**
   * The tail of a partition's record: the counters of {@code request}, and, in the first partition's
   * ({@code first}), the keys of {@code all[1, partitions)}; {@code zone}, the message's, and
   * {@code othersKey}, the key of the records in the other partitions, if not null. Sized, then
   * written into one exact array: this runs for every admitted decision.
   */
  static byte[] encode(long cost, ReusableRequest request, ReusableRequest[] all, int partitions, boolean first,
      ZoneId zone, byte[] othersKey, Scratch buffers) {
    int m = first ? partitions - 1 : 0;
    int n = request.counters();
    int size = 1 + Varint.size(cost) + Varint.size(n) + Varint.size(m);
    for (int i = 0; i < n; i++) {
      size += 1 + Varint.size(request.key(i).length) + request.key(i).length;
    }
    for (int j = 1; j <= m; j++) {
      size += Varint.size(all[j].partition().length) + all[j].partition().length;
    }
    byte[] zoneId = zone == null ? null : ZONE_IDS.computeIfAbsent(zone, z -> z.getId().getBytes(StandardCharsets.UTF_8));
    if (zoneId != null) {
      size += Varint.size(zoneId.length) + zoneId.length;
    }
    boolean withOthersKey = first && othersKey != null;
    size += withOthersKey ? othersKey.length : 0;
    if (size > dev.fcap.store.Idempotency.MAX_TAIL) {
      return NOT_RELEASABLE;
    }
    byte[] out = buffers != null ? buffers.tail(size) : new byte[size];
    out[0] = (byte) (RELEASABLE | (zoneId != null ? WITH_ZONE : 0) | (withOthersKey ? WITH_OTHERS_KEY : 0));
    int at = Varint.write(out, 1, cost);
    at = Varint.write(out, at, n);
    for (int i = 0; i < n; i++) {
      out[at++] = (byte) request.spec(i).algorithm().ordinal();
      at = bytes(out, at, request.key(i));
    }
    at = Varint.write(out, at, m);
    for (int j = 1; j <= m; j++) {
      at = bytes(out, at, all[j].partition());
    }
    if (zoneId != null) {
      at = bytes(out, at, zoneId);
    }
    if (withOthersKey) {
      System.arraycopy(othersKey, 0, out, at, othersKey.length);
    }
    return out;
  }

  private static int bytes(byte[] out, int at, byte[] b) {
    at = Varint.write(out, at, b.length);
    System.arraycopy(b, 0, out, at, b.length);
    return at + b.length;
  }

  /** The record of {@code tail}; null if the decision is not releasable by decision id. */
  static ReleaseRecord decode(byte[] tail) {
    if (tail.length < 4 || (tail[0] & RELEASABLE) == 0 || tail[0] > (RELEASABLE | WITH_ZONE | WITH_OTHERS_KEY)) {
      return null;
    }
    int at = 1;
    long cost = 0;
    for (int shift = 0; ; shift += 7) {
      int b = tail[at++];
      cost |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        break;
      }
    }
    int n = Varint.read(tail, at);
    at += Varint.size(n);
    List<CounterRequest> counters = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Algorithm algorithm = ALGORITHMS[tail[at++]];
      int len = Varint.read(tail, at);
      at += Varint.size(len);
      byte[] key = java.util.Arrays.copyOfRange(tail, at, at + len);
      at += len;
      // the spec only names the algorithm here: the release takes the one in force now
      counters.add(new CounterRequest(key, dev.fcap.store.CounterSpec.single(algorithm, 1, 1, true, 0), 0));
    }
    int m = Varint.read(tail, at);
    at += Varint.size(m);
    List<byte[]> others = new ArrayList<>(m);
    for (int j = 0; j < m; j++) {
      int len = Varint.read(tail, at);
      at += Varint.size(len);
      others.add(java.util.Arrays.copyOfRange(tail, at, at + len));
      at += len;
    }
    ZoneId zone = null;
    if ((tail[0] & WITH_ZONE) != 0) {
      int len = Varint.read(tail, at);
      at += Varint.size(len);
      zone = ZoneId.of(new String(tail, at, len, StandardCharsets.UTF_8));
      at += len;
    }
    byte[] othersKey = (tail[0] & WITH_OTHERS_KEY) != 0 ? java.util.Arrays.copyOfRange(tail, at, at + 16) : null;
    return new ReleaseRecord(cost, counters, others, zone, othersKey);
  }

  /** The key of the record in the decision's partition {@code j}: the first partition's, told apart. */
  static byte[] keyIn(byte[] key, int j) {
    if (j == 0) {
      return key;
    }
    byte[] out = key.clone();
    out[15] ^= (byte) j;
    return out;
  }
}
