package dev.fcap.server.failure;

import dev.fcap.store.PartitionRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * What the outage store admitted and released during one outage, in the order it did: the steps the
 * write-back merges into the store. Sealed while the write-back takes its last part.
 */
final class OutageJournal {
  private final int capacity;
  private List<PartitionRequest> steps = new ArrayList<>();
  private boolean sealed;

  OutageJournal(int capacity) {
    this.capacity = capacity;
  }

  /** Adds a step; false once sealed (the write-back has finished: the step goes to the store itself). */
  synchronized boolean add(PartitionRequest step) {
    if (sealed) {
      return false;
    }
    steps.add(step);
    return true;
  }

  synchronized boolean full() {
    return steps.size() >= capacity;
  }

  synchronized boolean isEmpty() {
    return steps.isEmpty();
  }

  synchronized int size() {
    return steps.size();
  }

  synchronized List<PartitionRequest> take() {
    List<PartitionRequest> taken = steps;
    steps = new ArrayList<>();
    return taken;
  }

  synchronized List<PartitionRequest> seal() {
    sealed = true;
    return take();
  }

  /** Puts back steps that failed to be written, ahead of those added since. */
  synchronized void restore(List<PartitionRequest> failed) {
    failed.addAll(steps);
    steps = new ArrayList<>(failed);
  }

  synchronized void unseal(List<PartitionRequest> failed) {
    sealed = false;
    restore(failed);
  }
}
