package dev.fcap.engine;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

/**
 * A recipient's live counters, per rule (and per content fingerprint for content rules), the send
 * windows of its policy as they stand at {@code time}, and the messages booked for after it.
 *
 * @param timeZone the recipient's zone the inspection reads: the one asked for, else the policy's,
 *     else UTC
 * @param booked the messages deferred to an instant after {@code time}, one per counter they are
 *     recorded in, by time (then policy order)
 */
public record Inspection(String tenant, String recipient, long time, long policyVersion, List<CounterView> counters,
    ZoneId timeZone, List<WindowView> windows, List<BookedView> booked) {

  public Inspection {
    counters = List.copyOf(counters);
    windows = List.copyOf(windows);
    booked = List.copyOf(booked);
  }

  /** An inspection with nothing booked. */
  public Inspection(String tenant, String recipient, long time, long policyVersion, List<CounterView> counters,
      ZoneId timeZone, List<WindowView> windows) {
    this(tenant, recipient, time, policyVersion, counters, timeZone, windows, List.of());
  }

  /** An inspection of counters alone, in UTC, with no send windows. */
  public Inspection(String tenant, String recipient, long time, long policyVersion, List<CounterView> counters) {
    this(tenant, recipient, time, policyVersion, counters, ZoneOffset.UTC, List.of());
  }
}
