package dev.fcap.store;

import java.util.List;

/** The counters of one partition as a store held them at {@link #time()} (epoch ms). */
public record PartitionSnapshot(long time, List<StoredCounter> counters) {

  public PartitionSnapshot {
    counters = List.copyOf(counters);
  }
}
