package dev.fcap.store.memory;

import static dev.fcap.store.memory.JournalFormat.getInt;
import static dev.fcap.store.memory.JournalFormat.getLong;
import static dev.fcap.store.memory.JournalFormat.putInt;
import static dev.fcap.store.memory.JournalFormat.putLong;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.Varint;
import dev.fcap.store.internal.ReusableRequest;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * A journal entry of one decision as a delta ({@link JournalFormat#DELTA}): not the partition's new
 * record, which a sliding log rewrites whole at every admission (each entry's age moves), but the step
 * that made it, replayed at recovery on the record before it ({@link MemoryStore#replay}).
 *
 * <pre>
 * payload  := DELTA varint(keyLength) key baseCrc:i32 resultCrc:i32 varint(sinceLatest) varint(cost)
 *             flags:u8 [idKey:16 duration(horizon) varint(tailLength) tail incarnation:i64]   (flags & ID)
 *             varint(counters) counter*
 * counter  := varint(keyLength) key kind:u8 varint(precision) varint(alignMs)
 *             (varint(limit) duration(window))* varint(enforcedMask) varint(relaxedMask)
 *             varint(headroomMask) varint(limit - bound)*   (one per check in headroomMask)
 *             [varint(periods) duration(end)*]   (kind PERIODS)
 * kind     := checks << 2 | algorithm, or PERIODS: a fixed window over calendar periods (one check,
 *             then the ends of its periods, CounterSpec#periodEnd)
 * duration := varint(ms / 1000 * 2) if whole seconds, else varint(ms * 2 + 1)
 * </pre>
 *
 * {@code sinceLatest} is the step's time after the base record's latest time (never before it: the
 * store decides a partition at no earlier time). On the seed policy a decision's entry is about 130
 * bytes, framing included, where its record grows to several hundred.
 *
 * {@code baseCrc} and {@code resultCrc} are the CRC32C of the record before and after the step. They
 * make the replay exact and idempotent: a delta applies only to the record it was made on, and the
 * record it gives is checked; one whose result is already there (a snapshot taken after it) is
 * skipped. A decision whose step is not this store's own alone (a large log beside the record, a
 * remembered decision in a record of its own or looked up there, a release, a new partition) is
 * journaled as its whole record instead.
 */
final class JournalDelta {
  private static final int ID = 1;
  private static final int REPLAYABLE = 2;
  /** The kind of a fixed window over calendar periods: "no checks", which no other counter has. */
  private static final int PERIODS = Algorithm.FIXED_WINDOW.ordinal();
  private static final Algorithm[] ALGORITHMS = Algorithm.values();

  private JournalDelta() {}

  /**
   * What a delta entry says: the partition, the checksums around the step, its time after the base
   * record's latest time, and the step.
   */
  record Step(byte[] partition, int baseCrc, int resultCrc, long sinceLatest, ReusableRequest request) {}

  static int crc(byte[] record) {
    CRC32C crc = new CRC32C();
    crc.update(record, 0, record.length);
    return (int) crc.getValue();
  }

  /** The payload's size for {@code request}'s step, {@code sinceLatest} after its base's latest time. */
  static int size(ReusableRequest r, long sinceLatest) {
    byte[] key = r.partition();
    int n = 1 + Varint.size(key.length) + key.length + 4 + 4 + Varint.size(sinceLatest) + Varint.size(r.cost()) + 1;
    Idempotency id = r.idempotency();
    if (id != null) {
      n += 16 + Varint.size(duration(id.horizonMs())) + Varint.size(id.tail().length) + id.tail().length + 8;
    }
    n += Varint.size(r.counters());
    for (int i = 0; i < r.counters(); i++) {
      CounterSpec s = r.spec(i);
      byte[] k = r.key(i);
      n += Varint.size(k.length) + k.length + 1 + Varint.size(s.precision()) + Varint.size(r.alignMs(i))
          + Varint.size(enforcedMask(s)) + Varint.size(relaxedMask(s)) + Varint.size(headroomMask(s));
      for (int c = 0; c < s.checks(); c++) {
        n += Varint.size(s.limit(c)) + Varint.size(duration(s.windowMs(c)));
        n += s.bound(c) == s.limit(c) ? 0 : Varint.size(s.limit(c) - s.bound(c));
      }
      if (s.periods() > 0) {
        n += Varint.size(s.periods());
        for (int e = 0; e < s.periods(); e++) {
          n += Varint.size(duration(s.periodEnd(e)));
        }
      }
    }
    return n;
  }

  /** Writes the payload at {@code d[pos]}; returns the position after it. */
  static int write(byte[] d, int pos, ReusableRequest r, int baseCrc, int resultCrc, long sinceLatest) {
    byte[] key = r.partition();
    d[pos++] = JournalFormat.DELTA;
    pos = Varint.write(d, pos, key.length);
    System.arraycopy(key, 0, d, pos, key.length);
    pos += key.length;
    putInt(d, pos, baseCrc);
    putInt(d, pos + 4, resultCrc);
    pos = Varint.write(d, pos + 8, sinceLatest);
    pos = Varint.write(d, pos, r.cost());
    Idempotency id = r.idempotency();
    d[pos++] = (byte) (id == null ? 0 : ID | (id.replayable() ? REPLAYABLE : 0));
    if (id != null) {
      System.arraycopy(id.key(), 0, d, pos, 16);
      pos = Varint.write(d, pos + 16, duration(id.horizonMs()));
      pos = Varint.write(d, pos, id.tail().length);
      System.arraycopy(id.tail(), 0, d, pos, id.tail().length);
      putLong(d, pos + id.tail().length, id.incarnation());
      pos += id.tail().length + 8;
    }
    pos = Varint.write(d, pos, r.counters());
    for (int i = 0; i < r.counters(); i++) {
      CounterSpec s = r.spec(i);
      byte[] k = r.key(i);
      pos = Varint.write(d, pos, k.length);
      System.arraycopy(k, 0, d, pos, k.length);
      pos += k.length;
      d[pos++] = (byte) (s.periods() > 0 ? PERIODS : s.checks() << 2 | s.algorithm().ordinal());
      pos = Varint.write(d, pos, s.precision());
      pos = Varint.write(d, pos, r.alignMs(i));
      for (int c = 0; c < s.checks(); c++) {
        pos = Varint.write(d, pos, s.limit(c));
        pos = Varint.write(d, pos, duration(s.windowMs(c)));
      }
      pos = Varint.write(d, pos, enforcedMask(s));
      pos = Varint.write(d, pos, relaxedMask(s));
      pos = Varint.write(d, pos, headroomMask(s));
      for (int c = 0; c < s.checks(); c++) {
        if (s.bound(c) != s.limit(c)) {
          pos = Varint.write(d, pos, s.limit(c) - s.bound(c));
        }
      }
      if (s.periods() > 0) {
        pos = Varint.write(d, pos, s.periods());
        for (int e = 0; e < s.periods(); e++) {
          pos = Varint.write(d, pos, duration(s.periodEnd(e)));
        }
      }
    }
    return pos;
  }

  /** Reads the payload {@code p[0, len)} of a delta entry. */
  static Step read(byte[] p, int len) {
    int[] at = {1};
    byte[] partition = bytes(p, at, varint(p, at));
    int baseCrc = getInt(p, at[0]);
    int resultCrc = getInt(p, at[0] + 4);
    at[0] += 8;
    long sinceLatest = varlong(p, at);
    long cost = varlong(p, at);
    int flags = p[at[0]++];
    Idempotency id = null;
    if ((flags & ID) != 0) {
      byte[] idKey = bytes(p, at, 16);
      long horizon = millis(varlong(p, at));
      byte[] tail = bytes(p, at, varint(p, at));
      long incarnation = getLong(p, at[0]);
      at[0] += 8;
      id = new Idempotency(idKey, horizon, tail, (flags & REPLAYABLE) != 0, incarnation);
    }
    ReusableRequest r = new ReusableRequest().set(partition, Operation.DECIDE, PartitionRequest.STORE_TIME, cost, 0,
        id, null);
    int counters = varint(p, at);
    for (int i = 0; i < counters; i++) {
      byte[] key = bytes(p, at, varint(p, at));
      int kind = p[at[0]++] & 0xff;
      Algorithm algorithm = ALGORITHMS[kind & 3];
      boolean periods = kind == PERIODS;
      int checks = periods ? 1 : kind >>> 2;
      int precision = varint(p, at);
      long align = varlong(p, at);
      long[] limits = new long[checks];
      long[] windows = new long[checks];
      for (int c = 0; c < checks; c++) {
        limits[c] = varlong(p, at);
        windows[c] = millis(varlong(p, at));
      }
      long mask = varlong(p, at);
      long relaxedMask = varlong(p, at);
      long headroomMask = varlong(p, at);
      boolean[] enforced = new boolean[checks];
      boolean[] relaxed = new boolean[checks];
      long[] bounds = limits.clone();
      for (int c = 0; c < checks; c++) {
        enforced[c] = (mask >>> c & 1) != 0;
        relaxed[c] = (relaxedMask >>> c & 1) != 0;
        bounds[c] -= (headroomMask >>> c & 1) != 0 ? varlong(p, at) : 0;
      }
      CounterSpec spec = new CounterSpec(algorithm, limits, bounds, windows, enforced, precision);
      if (periods) {
        long[] ends = new long[varint(p, at)];
        for (int e = 0; e < ends.length; e++) {
          ends[e] = millis(varlong(p, at));
        }
        spec = spec.withPeriods(ends);
      }
      r.addCounter(key, spec.withRelaxed(relaxed), align);
    }
    if (at[0] != len) {
      throw new IllegalArgumentException("a delta entry of " + len + " bytes ends at " + at[0]);
    }
    return new Step(partition, baseCrc, resultCrc, sinceLatest, r);
  }

  /** Which checks are enforced, bit c for check c (a sliding log shares one log among at most 63 checks). */
  private static long enforcedMask(CounterSpec s) {
    return mask(s, s::enforced);
  }

  /** Which checks are relaxed for the message (countOnly, override). */
  private static long relaxedMask(CounterSpec s) {
    return mask(s, s::relaxed);
  }

  /** Which checks admit the message up to a bound below their limit (its priority's headroom). */
  private static long headroomMask(CounterSpec s) {
    return mask(s, c -> s.bound(c) != s.limit(c));
  }

  /** Bit c set for each check c of {@code s} that {@code has}. */
  private static long mask(CounterSpec s, java.util.function.IntPredicate has) {
    long mask = 0;
    for (int c = 0; c < s.checks(); c++) {
      mask |= has.test(c) ? 1L << c : 0;
    }
    return mask;
  }

  /** Whether every counter's algorithm and checks fit a {@code kind} byte (at most 63 checks). */
  static boolean fits(ReusableRequest r) {
    for (int i = 0; i < r.counters(); i++) {
      if (r.spec(i).checks() > 63 || r.spec(i).algorithm().ordinal() > 3) {
        return false;
      }
    }
    return true;
  }

  /** A duration as written: whole seconds in fewer bytes (the low bit says which). */
  private static long duration(long ms) {
    return ms % 1000 == 0 && ms >= 0 ? ms / 1000 * 2 : ms * 2 + 1;
  }

  private static long millis(long duration) {
    return (duration & 1) == 0 ? (duration >>> 1) * 1000 : duration >>> 1;
  }

  private static int varint(byte[] p, int[] at) {
    int v = Varint.read(p, at[0]);
    at[0] += Varint.size(v);
    return v;
  }

  private static long varlong(byte[] p, int[] at) {
    long v = Varint.readLong(p, at[0]);
    at[0] += Varint.size(v);
    return v;
  }

  private static byte[] bytes(byte[] p, int[] at, int n) {
    byte[] b = Arrays.copyOfRange(p, at[0], at[0] + n);
    at[0] += n;
    return b;
  }
}
