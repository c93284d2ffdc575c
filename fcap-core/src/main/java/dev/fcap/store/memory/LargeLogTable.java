package dev.fcap.store.memory;

import dev.fcap.algorithm.LargeLog;
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
 */
final class LargeLogTable {
  /** One held log. */
  static final class Held {
    final byte[] counter;
    final LargeLog log;
    long expiresAt;
    long bytes;

    Held(byte[] counter, LargeLog log) {
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
      }
      return;
    }
    if (held == null || held.log != log) {
      if (held != null) {
        bytes -= held.bytes;
        byPartition.get(key).remove(held);
      }
      held = new Held(counter.clone(), log);
      byPartition.computeIfAbsent(new Key(partition.clone()), k -> new ArrayList<>(1)).add(held);
    }
    held.expiresAt = expiresAt;
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
          dropped++;
        }
      }
      if (list.isEmpty()) {
        it.remove();
      }
    }
    return dropped;
  }
}
