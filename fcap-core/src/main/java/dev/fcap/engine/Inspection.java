package dev.fcap.engine;

import java.util.List;

/** A recipient's live counters, per rule (and per content fingerprint for content rules). */
public record Inspection(String tenant, String recipient, long time, long policyVersion, List<CounterView> counters) {

  public Inspection {
    counters = List.copyOf(counters);
  }
}
