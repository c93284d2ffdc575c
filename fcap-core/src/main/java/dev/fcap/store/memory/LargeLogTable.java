package dev.fcap.store.memory;

import dev.fcap.algorithm.CounterStates;
import dev.fcap.algorithm.LargeLog;
import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.internal.ReusableRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The {@link LargeLog}s of one segment, beside its packed records: a large log is changed in place,
 * so it cannot live inside a partition's record, which every write copies whole. Keyed by partition,
 * then by counter; each log carries its expiry (the newest entry plus the longest window when last
 * written), swept like a record. Not thread-safe: used under the segment's lock.
 *
 * <p><b>Durable.</b> A durable store's {@link Journal} writes a changed log at most once per flush,
 * not once per decision (a log can hold a million entries): once {@link #track} is on, every log
 * that {@link #put} changes or that leaves the table is listed in {@link #dirty} once, in the order
 * it first changed, and the flusher, under the segment's lock, writes each listed log's current
 * state (or, if {@link Held#gone}, its removal) and clears the list.
 */
final class LargeLogTable {
  /** One held log. */
  static final class Held {
    final byte[] partition;
    final byte[] counter;
    final LargeLog log;
    long expiresAt;
    long bytes;
    /** Listed in {@link #dirty}: its state is not yet in the journal's pending buffer. */
    boolean dirty;
    /** Left the table: the journal writes its removal. */
    boolean gone;

    Held(byte[] partition, byte[] counter, LargeLog log) {
      this.partition = partition;
      this.counter = counter;
      this.log = log;
    }
  }

  private record Key(byte[] bytes) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && Arrays.equals(bytes, k.bytes);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bytes);
    }
  }

  private final HashMap<Key, List<Held>> byPartition = new HashMap<>();
  /** Heap held by the logs. */
  long bytes;
  /** Whether changes are listed in {@link #dirty} (a durable store, after recovery). */
  private boolean track;
  /** Logs changed or dropped since the journal last took the list; each once, oldest change first. */
  private List<Held> dirty = new ArrayList<>();

  /** Lists changes from now on, for the journal. */
  void track() {
    track = true;
  }

  /** The logs changed since the last call, each once, oldest change first; clears the list. */
  List<Held> takeDirty() {
    List<Held> taken = dirty;
    if (!taken.isEmpty()) {
      dirty = new ArrayList<>();
      for (Held h : taken) {
        h.dirty = false;
      }
    }
    return taken;
  }

  /** Every log held (snapshots). */
  List<Held> all() {
    List<Held> out = new ArrayList<>();
    for (List<Held> list : byPartition.values()) {
      out.addAll(list);
    }
    return out;
  }

  private void changed(Held held) {
    if (track && !held.dirty) {
      held.dirty = true;
      dirty.add(held);
    }
  }

  private void dropped(Held held) {
    held.gone = true;
    changed(held);
  }

  boolean isEmpty() {
    return byPartition.isEmpty();
  }

  /** The held log of a counter, or null. */
  Held find(byte[] partition, byte[] counter) {
    List<Held> held = byPartition.get(new Key(partition));
    if (held != null) {
      for (Held h : held) {
        if (Arrays.equals(h.counter, counter)) {
          return h;
        }
      }
    }
    return null;
  }

  /** The logs of a partition (empty if none). */
  List<Held> of(byte[] partition) {
    return byPartition.getOrDefault(new Key(partition), List.of());
  }

  /** Stores {@code log} (new or changed) for a counter, or drops it when empty. */
  void put(byte[] partition, byte[] counter, LargeLog log, long expiresAt) {
    Key key = new Key(partition);
    Held held = find(partition, counter);
    if (log.isEmpty()) {
      if (held != null) {
        bytes -= held.bytes;
        List<Held> list = byPartition.get(key);
        list.remove(held);
        if (list.isEmpty()) {
          byPartition.remove(key);
        }
        dropped(held);
      }
      return;
    }
    if (held == null || held.log != log) {
      if (held != null) {
        bytes -= held.bytes;
        byPartition.get(key).remove(held);
        dropped(held);
      }
      held = new Held(partition.clone(), counter.clone(), log);
      byPartition.computeIfAbsent(new Key(held.partition), k -> new ArrayList<>(1)).add(held);
    }
    held.expiresAt = expiresAt;
    changed(held);
    long now = log.bytes() + 64 + counter.length;
    bytes += now - held.bytes;
    held.bytes = now;
  }

  /** Drops a counter's log (the rule left the large layout). */
  void remove(byte[] partition, byte[] counter) {
    Held held = find(partition, counter);
    if (held != null) {
      bytes -= held.bytes;
      List<Held> list = byPartition.get(new Key(partition));
      list.remove(held);
      if (list.isEmpty()) {
        byPartition.remove(new Key(partition));
      }
      dropped(held);
    }
  }

  /** Forgets every log of a partition; whether there was one. */
  boolean removePartition(byte[] partition) {
    List<Held> held = byPartition.remove(new Key(partition));
    if (held == null) {
      return false;
    }
    for (Held h : held) {
      bytes -= h.bytes;
      dropped(h);
    }
    return true;
  }

  /** Drops every log that expired by {@code horizon}; returns how many. */
  int sweep(long horizon) {
    int dropped = 0;
    for (Iterator<Map.Entry<Key, List<Held>>> it = byPartition.entrySet().iterator(); it.hasNext(); ) {
      List<Held> list = it.next().getValue();
      for (Iterator<Held> h = list.iterator(); h.hasNext(); ) {
        Held held = h.next();
        if (held.expiresAt <= horizon) {
          bytes -= held.bytes;
          h.remove();
          held.gone = true; // expired: recovery skips it anyway, so only a listed one writes its removal
          dropped++;
        }
      }
      if (list.isEmpty()) {
        it.remove();
      }
    }
    return dropped;
  }

  /**
   * The {@link LargeLog} of each request counter whose rule needs one (null entries: the counter is
   * in the record; null: none is), taking over a record state written before the rule grew; and
   * the other way, a held large log as a record state when the rule shrank below the threshold.
   */
  static LargeLog[] gather(Segment segment, ReusableRequest request, CounterStates states, long now) {
    int counters = request.counters();
    LargeLog[] large = null;
    for (int i = 0; i < counters; i++) {
      CounterSpec spec = request.spec(i);
      boolean isLarge = LargeLog.isLarge(spec);
      if (!isLarge && segment.large.isEmpty()) {
        continue;
      }
      LargeLogTable.Held held = spec.algorithm() == Algorithm.SLIDING_LOG
          ? segment.large.find(request.partition(), request.key(i)) : null;
      LargeLog live = held != null && held.expiresAt > now ? held.log : null;
      if (isLarge) {
        if (large == null) {
          large = new LargeLog[counters];
        }
        large[i] = live != null ? live : LargeLog.of(states.get(i));
        if (sameCounterBefore(request, large, i)) {
          large[i] = LargeLog.of(large[i].encode()); // the same counter twice: the first write wins, as in the record
        }
        states.set(i, null);
      } else if (live != null) {
        states.set(i, live.encode());
      }
    }
    return large;
  }

  /** After a write: the request's large logs into the table; logs of rules that shrank out of it. */
  static void storeAfter(Segment segment, ReusableRequest request, LargeLog[] large) {
    for (int i = 0; i < request.counters(); i++) {
      if (large != null && large[i] != null) {
        if (!sameCounterBefore(request, large, i)) {
          segment.large.put(request.partition(), request.key(i), large[i], large[i].expiresAt(request.spec(i)));
        }
      } else if (request.spec(i).algorithm() == Algorithm.SLIDING_LOG && !segment.large.isEmpty()) {
        segment.large.remove(request.partition(), request.key(i));
      }
    }
  }

  private static boolean sameCounterBefore(ReusableRequest request, LargeLog[] large, int i) {
    for (int j = 0; j < i; j++) {
      if (large[j] != null && Arrays.equals(request.key(j), request.key(i))) {
        return true;
      }
    }
    return false;
  }
}
