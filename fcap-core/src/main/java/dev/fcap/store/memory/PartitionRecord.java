package dev.fcap.store.memory;

import dev.fcap.algorithm.CounterStates;
import dev.fcap.algorithm.PartitionStep;
import dev.fcap.algorithm.StepWrites;
import dev.fcap.model.Algorithm;
import dev.fcap.store.StoredCounter;
import dev.fcap.store.Varint;
import dev.fcap.store.internal.ReusableRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The packed form of one partition in the {@link MemoryStore}: its key and all its counters in a
 * single array, so that a recipient costs one array header instead of a graph of objects.
 *
 * <pre>
 * record  := expires:i32 varint(keyLength) key varint(back) counter*
 * counter := varint(idLength) id algorithm:u8 expires:i32 varint(stateLength) state
 * </pre>
 *
 * {@code expires} is in whole seconds since 2020-01-01T00:00Z, rounded up, so a counter is kept a
 * little longer than it matters, never shorter; the record's own {@code expires} is the latest of its
 * counters', so the sweep reads four bytes instead of walking every counter. {@code state} is the
 * algorithm's own layout. This layout is private to the MemoryStore (Redis keeps its own).
 *
 * <p><b>The partition's time.</b> {@code back} says when the partition was last written: at
 * {@code expires} (in ms) minus {@code back} ms, its {@link #latest} time. The store decides every
 * request of the partition at no earlier time (a clamp: per partition, time never runs backwards,
 * docs/algorithms.md "Clock steps back"), because what a write pruned or dropped by its time cannot be
 * seen again by an earlier request. The header's expiry is never before the latest time (live
 * counters expire after it, and a record with nothing live left keeps the key and the time until
 * then), so {@code back} is a small unsigned varint: 1 to 4 bytes for windows up to a day.
 *
 * <p>A remembered decision (a message id, a release record: {@link dev.fcap.store.Idempotency}) is an
 * entry of the same shape with kind {@link #MESSAGE} instead of an algorithm and
 * {@link PartitionStep#remember} bytes as its state: the partition's first few inline, among its
 * counters (carried over by writes and swept like any counter, never matched by a counter lookup),
 * the rest in records of their own ({@link #entry}, {@link RememberedDecisions}).
 *
 * <p>The partition's <b>incarnation</b> ({@link dev.fcap.store.Idempotency}, "stored as nothing"), if it
 * has one, is an entry of kind {@link #INCARNATION} with an empty id and the 8-byte value as its
 * state, written last. Its expiry is the latest release horizon of the decisions that answered it
 * (each stamping DECIDE extends it), not its counters': a partition whose counts live beside the
 * record (a large log) must keep it too. A reset deletes it with the record, and a partition whose
 * incarnation expired takes a new one (15 bytes per partition, against ~75 per admitted decision for
 * a release record).
 *
 * <p>Counters are found by comparing ids; an id ends with its most distinctive bytes (a content
 * fingerprint), so the comparison first rejects on the last eight bytes.
 *
 * <p><b>The counter filter</b> (layout 5). Most lookups of a busy recipient ask for a counter the
 * record does not hold (a content it was not sent within the content window): without help that
 * walks every entry, a cache line per ~60 bytes, to learn that nothing matches. A record written with
 * {@link #FILTER_MIN} or more counters therefore starts with an entry of kind {@link #FILTER} (empty
 * id) whose state is a Bloom filter over its counters' ids ({@link CounterFilter}: 8 bits per
 * counter, 3 probes, about 3 % false positives), so a lookup of an absent counter usually reads the
 * filter and stops. Only {@link #write} builds it, from exactly the counters it writes, and no other
 * change of a record adds a counter (one drops a message entry, the sweep drops whole records), so
 * the filter never lacks a counter the record holds; a record without one (fewer counters, or an
 * earlier layout) is walked as before. Small records, the usual recipient's, carry none: their walk
 * is a line or two.
 */
final class PartitionRecord {
  private static final long EPOCH_MS = 1_577_836_800_000L;
  private static final Algorithm[] ALGORITHMS = Algorithm.values();
  private static final java.lang.invoke.VarHandle LONG =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.BIG_ENDIAN);
  /** Bytes before the key's length: the record's expiry. */
  static final int HEAD = 4;
  /**
   * Version of this layout, written in the header of the store's state files ({@link Journal}); bump
   * it whenever the layout changes, so that a start never reads records it would misunderstand.
   */
  static final int FORMAT = 5;
  /** The kind byte of a remembered decision (the algorithms are 0 to 3; Redis uses 4 for gap-form logs). */
  static final byte MESSAGE = 127;
  /** The kind byte of the partition's incarnation (layout 4). */
  static final byte INCARNATION = 125;
  /** The kind byte of the record's counter filter (layout 5), always its first entry. */
  static final byte FILTER = 124;
  /** The fewest counters a record needs to get a filter. */
  static final int FILTER_MIN = 4;
  private static final byte[] NO_ID = new byte[0];
  /** The incarnation entry's state before its 8 bytes are set in place (never changed). */
  private static final byte[] EIGHT_BYTES = new byte[8];
  /** {@link #writtenExpiry} of a counter not written; {@link #toSeconds} never answers it. */
  private static final int NOT_WRITTEN = Integer.MIN_VALUE;
  /** Size of the incarnation's entry: empty id, kind, expiry, state length, 8 bytes. */
  private static final int INCARNATION_SIZE = 1 + 1 + 4 + 1 + 8;

  private PartitionRecord() {}

  /** The partition key of a record (a copy). */
  static byte[] key(byte[] record) {
    int len = Varint.read(record, HEAD);
    int at = HEAD + Varint.size(len);
    return Arrays.copyOfRange(record, at, at + len);
  }

  /**
   * Whether the record is the store's own (a remembered decision, a reset generation: keys that
   * start with 0xFE or 0xFF, see {@link MemoryStore}), not a partition of counters.
   */
  static boolean isStorePrivate(byte[] record) {
    int len = Varint.read(record, HEAD);
    return len > 0 && (record[HEAD + Varint.size(len)] & 0xff) >= 0xFE;
  }

  static boolean keyEquals(byte[] record, byte[] key) {
    int len = Varint.read(record, HEAD);
    int at = HEAD + Varint.size(len);
    return len == key.length && Arrays.equals(record, at, at + len, key, 0, len);
  }

  /** Whether the record holds only its key and time, and perhaps its incarnation (nothing live is left). */
  static boolean isEmpty(byte[] record) {
    int at = skipKey(record);
    return at == record.length || at + INCARNATION_SIZE == record.length && isIncarnation(record, at);
  }

  /** The partition's latest time (epoch ms): every write's time is at or before it. */
  static long latest(byte[] record) {
    int len = Varint.read(record, HEAD);
    return expiresMs(record, 0) - Varint.readLong(record, HEAD + Varint.size(len) + len);
  }

  /**
   * Sets state i of {@code states} to the live state of the request's counter i where it lies in
   * the record (a slice: no copy), if the record holds one.
   */
  static void readStates(byte[] record, ReusableRequest request, long now, CounterStates states) {
    int n = request.counters();
    int at = skipKey(record);
    long absent = 0; // bit i: the filter says counter i is not in the record (64 counters at most)
    int wanted = n;
    if (isFilter(record, at) && n <= 64) {
      int bytes = Varint.read(record, at + 6); // the entry's state length
      int from = at + 6 + Varint.size(bytes);
      int bits = bytes * 8;
      for (int i = 0; i < n; i++) {
        byte[] key = request.key(i);
        if (!CounterFilter.mightHold(record, from, bits, key, 0, key.length)) {
          absent |= 1L << i;
          wanted--;
        }
      }
      if (wanted == 0) {
        return; // the usual lookup of a busy recipient's new content: no walk
      }
    }
    int found = 0;
    while (at < record.length) {
      int idLen = Varint.read(record, at);
      int id = at + Varint.size(idLen);
      int alg = id + idLen;
      int stateLenAt = alg + 5;
      int stateLen = Varint.read(record, stateLenAt);
      int state = stateLenAt + Varint.size(stateLen);
      if (expiresMs(record, alg + 1) > now) {
        for (int i = 0; i < n; i++) {
          if ((absent & 1L << i) == 0 && idEquals(record, id, idLen, request.key(i))
              && request.spec(i).algorithm().ordinal() == record[alg]) {
            states.slice(i, record, state, stateLen);
            if (++found == wanted) {
              return; // request counters are written first, so the usual case stops early
            }
          }
        }
      }
      at = state + stateLen;
    }
  }

  /** Whether the id at {@code record[id, id + idLen)} equals {@code key}; rejects most on one long. */
  static boolean idEquals(byte[] record, int id, int idLen, byte[] key) {
    if (idLen != key.length) {
      return false;
    }
    if (idLen >= 8 && (long) LONG.get(record, id + idLen - 8) != (long) LONG.get(key, idLen - 8)) {
      return false;
    }
    return Arrays.equals(record, id, id + idLen, key, 0, idLen);
  }

  /**
   * The next record: the request's counters with their new states, then the other live counters of
   * {@code old} unchanged, at {@code now}, the partition's new latest time. With nothing live left,
   * the key and the time alone, until {@code now}.
   *
   * <p>Two passes, sizing then filling one exact array: this runs on every admitted decision and
   * records of busy recipients reach kilobytes, so no intermediate buffer is worth its copy.
   */
  static byte[] write(byte[] old, ReusableRequest request, CounterStates states, long now) {
    return write(old, request, states, now, null, false);
  }

  /**
   * The partition's incarnation: 0 if the record has none, or it has expired at {@code now} (the
   * sweep has not reached it yet: a write then gives it a new one).
   */
  static long incarnation(byte[] record, long now) {
    if (record == null) {
      return 0;
    }
    for (int at = skipKey(record); at < record.length; ) {
      int idLen = Varint.read(record, at);
      int alg = at + Varint.size(idLen) + idLen;
      int stateLen = Varint.read(record, alg + 5);
      if (record[alg] == INCARNATION) {
        if (expiresMs(record, alg + 1) <= now) {
          return 0;
        }
        return (long) LONG.get(record, alg + 5 + Varint.size(stateLen));
      }
      at = alg + 5 + Varint.size(stateLen) + stateLen;
    }
    return 0;
  }

  /**
   * The record after a step: {@code old} (null: none) with the request's counters in their next
   * states, and what else the step wrote ({@code writes}; null: nothing else). With
   * {@code rememberInline}, the entry the step remembers under the request's message id is kept in
   * the record, written in the same pass (the usual admission with a release record copies the record
   * once, not twice). The incarnation the step stamps is taken if the old record has no live one; a
   * live one is carried over, kept at least until the step's stamp expires and as long as it was. It
   * is written last ({@link #writtenIncarnation}).
   */
  static byte[] write(byte[] old, ReusableRequest request, CounterStates states, long now, StepWrites writes,
      boolean rememberInline) {
    byte[] messageKey = rememberInline && writes.remembered() != null ? request.idempotency().key() : null;
    byte[] remembered = writes == null ? null : writes.remembered();
    long messageExpiresAt = writes == null ? 0 : writes.rememberedUntil();
    long incarnation = writes == null ? 0 : writes.stamp();
    long incarnationUntil = writes == null ? 0 : writes.stampedUntil();
    byte[] key = request.partition();
    int n = request.counters();
    int size = HEAD + Varint.size(key.length) + key.length;
    int latest = toSeconds(now);
    int written = 0; // counters written: what the filter holds
    for (int i = 0; i < n; i++) {
      int expires = writtenExpiry(request, states, i, now);
      if (expires != NOT_WRITTEN) {
        written++;
        latest = Math.max(latest, expires);
        byte[] id = request.key(i);
        size += Varint.size(id.length) + id.length + 5 + Varint.size(states.length(i)) + states.length(i);
      }
    }
    int oldFrom = old == null ? 0 : skipKey(old);
    int incarnationExpires = toSeconds(incarnationUntil);
    if (old != null) {
      for (int at = oldFrom; at < old.length; ) {
        int next = nextCounter(old, at);
        if (isIncarnation(old, at)) {
          if (expiresMs(old, at + 2) > now) {
            incarnation = (long) LONG.get(old, next - 8); // carried over below, never shorter
            incarnationExpires = Math.max(incarnationExpires, expiresSeconds(old, at));
          }
        } else if (!isFilter(old, at) && keepOld(old, at, request, now)) { // a filter is built anew
          size += next - at;
          latest = Math.max(latest, expiresSeconds(old, at));
          written += isCounter(old, at) ? 1 : 0;
        }
        at = next;
      }
    }
    if (incarnation != 0) {
      size += INCARNATION_SIZE;
      latest = Math.max(latest, incarnationExpires);
    }
    int messageExpires = 0;
    if (messageKey != null) {
      messageExpires = toSeconds(messageExpiresAt);
      latest = Math.max(latest, messageExpires);
      size += Varint.size(messageKey.length) + messageKey.length + 5 + Varint.size(remembered.length)
          + remembered.length;
    }
    int filterBits = written >= FILTER_MIN ? CounterFilter.bits(written) : 0;
    if (filterBits > 0) {
      size += 6 + Varint.size(filterBits / 8) + filterBits / 8;
    }
    long back = EPOCH_MS + latest * 1000L - now;
    size += Varint.size(back);
    byte[] out = new byte[size];
    putInt(out, 0, latest);
    int pos = Varint.write(out, HEAD, key.length);
    System.arraycopy(key, 0, out, pos, key.length);
    pos = Varint.write(out, pos + key.length, back);
    int filter = -1; // where the filter's bits start
    if (filterBits > 0) {
      out[pos + 1] = FILTER; // after an empty id
      putInt(out, pos + 2, latest);
      filter = Varint.write(out, pos + 6, filterBits / 8); // the entry's state: the bits
      pos = filter + filterBits / 8;
    }
    for (int i = 0; i < n; i++) {
      int expires = writtenExpiry(request, states, i, now); // again, not kept: no array per write
      if (expires != NOT_WRITTEN) {
        byte[] id = request.key(i);
        pos = writeCounter(out, pos, id, request.spec(i).algorithm().ordinal(), expires, states.source(i),
            states.from(i), states.length(i));
        if (filter >= 0) {
          CounterFilter.add(out, filter, filterBits, id, 0, id.length);
        }
      }
    }
    if (old != null) {
      for (int at = oldFrom; at < old.length; ) {
        int next = nextCounter(old, at);
        if (!isIncarnation(old, at) && !isFilter(old, at) && keepOld(old, at, request, now)) {
          System.arraycopy(old, at, out, pos, next - at);
          if (filter >= 0 && isCounter(old, at)) {
            int idLen = Varint.read(old, at);
            CounterFilter.add(out, filter, filterBits, old, at + Varint.size(idLen), idLen);
          }
          pos += next - at;
        }
        at = next;
      }
    }
    if (messageKey != null) {
      pos = writeCounter(out, pos, messageKey, MESSAGE, messageExpires, remembered);
    }
    if (incarnation != 0) {
      pos = writeCounter(out, pos, NO_ID, INCARNATION, incarnationExpires, EIGHT_BYTES);
      LONG.set(out, pos - 8, incarnation);
    }
    return out;
  }

  /** The incarnation of a record that {@link #write} just gave one: its last 8 bytes, no scan. */
  static long writtenIncarnation(byte[] record) {
    return (long) LONG.get(record, record.length - 8);
  }

  /** Whether the entry at {@code at} is the partition's incarnation. */
  private static boolean isIncarnation(byte[] record, int at) {
    return record[at] == 0 && record[at + 1] == INCARNATION;
  }

  /** Whether the entry at {@code at} (perhaps the record's end) is the record's counter filter. */
  private static boolean isFilter(byte[] record, int at) {
    return at < record.length && record[at] == 0 && record[at + 1] == FILTER;
  }

  /** Whether the entry at {@code at} is a counter (an algorithm's state), not one of the store's own. */
  private static boolean isCounter(byte[] record, int at) {
    int idLen = Varint.read(record, at);
    return isAlgorithm(record[at + Varint.size(idLen) + idLen]);
  }

  private static boolean isAlgorithm(byte kind) {
    return kind >= 0 && kind < ALGORITHMS.length;
  }

  /** Whether the record opens with a counter filter (tests). */
  static boolean hasFilter(byte[] record) {
    return isFilter(record, skipKey(record));
  }

  /** Where the counter after the one at {@code at} starts. */
  static int nextCounter(byte[] record, int at) {
    int idLen = Varint.read(record, at);
    int alg = at + Varint.size(idLen) + idLen;
    int stateLen = Varint.read(record, alg + 5);
    return alg + 5 + Varint.size(stateLen) + stateLen;
  }

  /** Whether an old counter is carried over: still live and not rewritten by the request. */
  private static boolean keepOld(byte[] record, int at, ReusableRequest request, long now) {
    int idLen = Varint.read(record, at);
    int id = at + Varint.size(idLen);
    int alg = id + idLen;
    return expiresMs(record, alg + 1) > now && !requested(request, record, id, idLen, record[alg]);
  }

  /** The expiry field of the counter at {@code at}, in record seconds. */
  private static int expiresSeconds(byte[] record, int at) {
    int idLen = Varint.read(record, at);
    int field = at + Varint.size(idLen) + idLen + 1;
    return (record[field] & 0xff) << 24 | (record[field + 1] & 0xff) << 16 | (record[field + 2] & 0xff) << 8
        | (record[field + 3] & 0xff);
  }

  static void putInt(byte[] out, int at, int v) {
    out[at] = (byte) (v >>> 24);
    out[at + 1] = (byte) (v >>> 16);
    out[at + 2] = (byte) (v >>> 8);
    out[at + 3] = (byte) v;
  }

  /** The live counters of a record, for inspection (remembered decisions are not counters). */
  static List<StoredCounter> live(byte[] record, long now) {
    List<StoredCounter> live = new ArrayList<>();
    int at = skipKey(record);
    while (at < record.length) {
      int idLen = Varint.read(record, at);
      int id = at + Varint.size(idLen);
      int alg = id + idLen;
      int stateLen = Varint.read(record, alg + 5);
      int state = alg + 5 + Varint.size(stateLen);
      if (expiresMs(record, alg + 1) > now && isAlgorithm(record[alg])) {
        live.add(new StoredCounter(Arrays.copyOfRange(record, id, id + idLen), ALGORITHMS[record[alg]],
            Arrays.copyOfRange(record, state, state + stateLen)));
      }
      at = state + stateLen;
    }
    return live;
  }

  /** When the last counter of the record expires, epoch ms: the record's header. */
  static long expiresAt(byte[] record) {
    return expiresMs(record, 0);
  }

  /**
   * The expiry (record seconds) {@link #write} gives request counter {@code i}, or
   * {@link #NOT_WRITTEN}: empty, expired at {@code now}, or the same counter as an earlier one (the
   * first wins).
   */
  private static int writtenExpiry(ReusableRequest request, CounterStates states, int i, long now) {
    if (states.isEmpty(i)) {
      return NOT_WRITTEN;
    }
    // read where it lies: a state recorded in this step may be a slice of the states' scratch
    long expiresAt = PartitionStep.expiresAt(request.spec(i), request.alignMs(i), states, i);
    return expiresAt > now && !writtenBefore(request, i) ? toSeconds(expiresAt) : NOT_WRITTEN;
  }

  private static boolean writtenBefore(ReusableRequest request, int i) {
    for (int j = 0; j < i; j++) {
      if (Arrays.equals(request.key(j), request.key(i)) && request.spec(j).algorithm() == request.spec(i).algorithm()) {
        return true;
      }
    }
    return false;
  }

  private static boolean requested(ReusableRequest request, byte[] record, int id, int idLen, byte alg) {
    for (int i = 0; i < request.counters(); i++) {
      if (idEquals(record, id, idLen, request.key(i)) && request.spec(i).algorithm().ordinal() == alg) {
        return true;
      }
    }
    return false;
  }

  static int writeCounter(byte[] out, int pos, byte[] id, int alg, int expires, byte[] state) {
    return writeCounter(out, pos, id, alg, expires, state, 0, state.length);
  }

  /** Writes an entry whose state is {@code state[from, from + length)}; where it ends. */
  static int writeCounter(byte[] out, int pos, byte[] id, int alg, int expires, byte[] state, int from,
      int length) {
    pos = Varint.write(out, pos, id.length);
    System.arraycopy(id, 0, out, pos, id.length);
    pos += id.length;
    out[pos++] = (byte) alg;
    out[pos++] = (byte) (expires >>> 24);
    out[pos++] = (byte) (expires >>> 16);
    out[pos++] = (byte) (expires >>> 8);
    out[pos++] = (byte) expires;
    pos = Varint.write(out, pos, length);
    System.arraycopy(state, from, out, pos, length);
    return pos + length;
  }

  static int toSeconds(long epochMs) {
    long s = -Math.floorDiv(-(epochMs - EPOCH_MS), 1000);
    return (int) Math.max(Integer.MIN_VALUE + 1, Math.min(Integer.MAX_VALUE, s));
  }

  static long expiresMs(byte[] b, int at) {
    int s = (b[at] & 0xff) << 24 | (b[at + 1] & 0xff) << 16 | (b[at + 2] & 0xff) << 8 | (b[at + 3] & 0xff);
    return EPOCH_MS + s * 1000L;
  }

  /** Where the first counter starts: after the key and the time. */
  static int skipKey(byte[] record) {
    int len = Varint.read(record, HEAD);
    int at = HEAD + Varint.size(len) + len;
    while (record[at++] < 0) {
      // the time's varint: high bit set on every byte but the last
    }
    return at;
  }
}
