package dev.fcap.engine;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

/**
 * A recipient's live counters, per rule (and per content fingerprint for content rules), and the send
 * windows of its policy as they stand at {@code time}.
 *
 * @param timeZone the recipient's zone the inspection reads: the one asked for, else the policy's,
 *     else UTC
 */
public record Inspection(String tenant, String recipient, long time, long policyVersion, List<CounterView> counters,
    ZoneId timeZone, List<WindowView> windows) {

  public Inspection {
    counters = List.copyOf(counters);
    windows = List.copyOf(windows);
  }

  /** An inspection of counters alone, in UTC, with no send windows. */
  public Inspection(String tenant, String recipient, long time, long policyVersion, List<CounterView> counters) {
    this(tenant, recipient, time, policyVersion, counters, ZoneOffset.UTC, List.of());
  }
}
