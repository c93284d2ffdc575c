package dev.fcap.store.memory;

import dev.fcap.algorithm.PartitionStep;
import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.StoredCounter;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The packed form of one partition in the {@link MemoryStore}: its key and all its counters in a
 * single array, so that a recipient costs one array header instead of a graph of objects.
 *
 * <pre>
 * record  := varint(keyLength) key counter*
 * counter := varint(idLength) id algorithm:u8 expires:i32 varint(stateLength) state
 * </pre>
 *
 * {@code expires} is in whole seconds since 2020-01-01T00:00Z, rounded up, so a counter is kept a
 * little longer than it matters, never shorter. {@code state} is the algorithm's own layout.
 */
final class PartitionRecord {
  private static final long EPOCH_MS = 1_577_836_800_000L;
  private static final Algorithm[] ALGORITHMS = Algorithm.values();

  private PartitionRecord() {}

  static boolean keyEquals(byte[] record, byte[] key) {
    int len = readVarint(record, 0);
    int at = varintSize(len);
    return len == key.length && Arrays.equals(record, at, at + len, key, 0, len);
  }

  /** Fills {@code states[i]} with the live state of {@code counters.get(i)}, if the record holds one. */
  static void readStates(byte[] record, List<CounterRequest> counters, long now, byte[][] states) {
    int at = skipKey(record);
    while (at < record.length) {
      int idLen = readVarint(record, at);
      int id = at + varintSize(idLen);
      int alg = id + idLen;
      int stateLenAt = alg + 5;
      int stateLen = readVarint(record, stateLenAt);
      int state = stateLenAt + varintSize(stateLen);
      if (expiresMs(record, alg + 1) > now) {
        for (int i = 0; i < counters.size(); i++) {
          CounterRequest c = counters.get(i);
          if (c.spec().algorithm().ordinal() == record[alg]
              && Arrays.equals(record, id, id + idLen, c.key(), 0, c.key().length)) {
            states[i] = Arrays.copyOfRange(record, state, state + stateLen);
          }
        }
      }
      at = state + stateLen;
    }
  }

  /**
   * The next record: the request's counters with their new states, then the other live counters of
   * {@code old} unchanged. Null when nothing live is left.
   */
  static byte[] write(byte[] old, byte[] key, List<CounterRequest> counters, byte[][] states, long now) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(old == null ? 64 : old.length + 16);
    writeVarint(out, key.length);
    out.write(key, 0, key.length);
    int empty = out.size();
    for (int i = 0; i < counters.size(); i++) {
      CounterRequest c = counters.get(i);
      long expires = PartitionStep.expiresAt(c, states[i]);
      if (states[i] != null && expires > now && !writtenBefore(counters, i)) {
        writeCounter(out, c.key(), c.spec().algorithm().ordinal(), toSeconds(expires), states[i], 0, states[i].length);
      }
    }
    if (old != null) {
      int at = skipKey(old);
      while (at < old.length) {
        int idLen = readVarint(old, at);
        int id = at + varintSize(idLen);
        int alg = id + idLen;
        int stateLen = readVarint(old, alg + 5);
        int state = alg + 5 + varintSize(stateLen);
        if (expiresMs(old, alg + 1) > now && !requested(counters, old, id, idLen, old[alg])) {
          out.write(old, at, state + stateLen - at);
        }
        at = state + stateLen;
      }
    }
    return out.size() == empty ? null : out.toByteArray();
  }

  /** The live counters of a record, for inspection. */
  static List<StoredCounter> live(byte[] record, long now) {
    List<StoredCounter> live = new ArrayList<>();
    int at = skipKey(record);
    while (at < record.length) {
      int idLen = readVarint(record, at);
      int id = at + varintSize(idLen);
      int alg = id + idLen;
      int stateLen = readVarint(record, alg + 5);
      int state = alg + 5 + varintSize(stateLen);
      if (expiresMs(record, alg + 1) > now) {
        live.add(new StoredCounter(Arrays.copyOfRange(record, id, id + idLen), ALGORITHMS[record[alg]],
            Arrays.copyOfRange(record, state, state + stateLen)));
      }
      at = state + stateLen;
    }
    return live;
  }

  /** When the last counter of the record expires, epoch ms. */
  static long expiresAt(byte[] record) {
    long max = Long.MIN_VALUE;
    int at = skipKey(record);
    while (at < record.length) {
      int idLen = readVarint(record, at);
      int alg = at + varintSize(idLen) + idLen;
      max = Math.max(max, expiresMs(record, alg + 1));
      int stateLen = readVarint(record, alg + 5);
      at = alg + 5 + varintSize(stateLen) + stateLen;
    }
    return max;
  }

  private static boolean writtenBefore(List<CounterRequest> counters, int i) {
    for (int j = 0; j < i; j++) {
      if (Arrays.equals(counters.get(j).key(), counters.get(i).key())
          && counters.get(j).spec().algorithm() == counters.get(i).spec().algorithm()) {
        return true;
      }
    }
    return false;
  }

  private static boolean requested(List<CounterRequest> counters, byte[] record, int id, int idLen, byte alg) {
    for (CounterRequest c : counters) {
      if (c.spec().algorithm().ordinal() == alg && Arrays.equals(record, id, id + idLen, c.key(), 0, c.key().length)) {
        return true;
      }
    }
    return false;
  }

  private static void writeCounter(ByteArrayOutputStream out, byte[] id, int alg, int expires, byte[] s, int off, int len) {
    writeVarint(out, id.length);
    out.write(id, 0, id.length);
    out.write(alg);
    out.write(expires >>> 24);
    out.write(expires >>> 16);
    out.write(expires >>> 8);
    out.write(expires);
    writeVarint(out, len);
    out.write(s, off, len);
  }

  private static int toSeconds(long epochMs) {
    long s = -Math.floorDiv(-(epochMs - EPOCH_MS), 1000);
    return (int) Math.max(Integer.MIN_VALUE + 1, Math.min(Integer.MAX_VALUE, s));
  }

  private static long expiresMs(byte[] b, int at) {
    int s = (b[at] & 0xff) << 24 | (b[at + 1] & 0xff) << 16 | (b[at + 2] & 0xff) << 8 | (b[at + 3] & 0xff);
    return EPOCH_MS + s * 1000L;
  }

  private static int skipKey(byte[] record) {
    int len = readVarint(record, 0);
    return varintSize(len) + len;
  }

  static int readVarint(byte[] b, int at) {
    int v = 0;
    int shift = 0;
    while (true) {
      int x = b[at++];
      v |= (x & 0x7f) << shift;
      if (x >= 0) {
        return v;
      }
      shift += 7;
    }
  }

  static int varintSize(int v) {
    int n = 1;
    while ((v >>>= 7) != 0) {
      n++;
    }
    return n;
  }

  private static void writeVarint(ByteArrayOutputStream out, int v) {
    while ((v & ~0x7f) != 0) {
      out.write((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.write(v);
  }
}
