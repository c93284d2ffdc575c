package dev.fcap.client;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A recipient's counters ({@link FcapClient#inspect}): why was it blocked, when does it free up; and
 * the send windows of its policy, read in {@code timeZone} (the one asked for, else the policy's,
 * else UTC).
 */
public record Inspection(String tenant, String recipient, long time, long policyVersion, boolean degraded,
    List<Counter> counters, List<Denial> recentDenials, ZoneId timeZone, List<Window> windows) {

  public Inspection {
    counters = List.copyOf(counters);
    recentDenials = List.copyOf(recentDenials);
    windows = List.copyOf(windows);
  }

  /** An inspection of counters alone, in UTC, with no send windows. */
  public Inspection(String tenant, String recipient, long time, long policyVersion, boolean degraded,
      List<Counter> counters, List<Denial> recentDenials) {
    this(tenant, recipient, time, policyVersion, degraded, counters, recentDenials, ZoneOffset.UTC, List.of());
  }

  /**
   * A send-window rule of the recipient's policy: whether it is open at the inspection's time and, if
   * shut, when it next opens ({@code opensAt}, epoch ms; -1 never). It applies to the messages its
   * {@code match} selects and {@code exempt} does not (dimension to values; empty: any message).
   */
  public record Window(String rule, boolean enforced, ZoneId zone, boolean open, long opensAt,
      Map<String, Set<String>> match, Map<String, Set<String>> exempt) {
    public Window {
      match = Map.copyOf(match);
      exempt = Map.copyOf(exempt);
    }
  }

  /** One counter: a rule and the values of its key's other dimensions (content as its fingerprint). */
  public record Counter(String rule, long limit, long windowMs, boolean enforced, Map<String, String> values,
      long used, long remaining, long freesInMs) {
    public Counter {
      values = Map.copyOf(values);
    }
  }

  /** A recent denial; {@code channel} and {@code category} are null when the message had none. */
  public record Denial(String decisionId, long time, List<String> blockedBy, String channel, String category) {
    public Denial {
      blockedBy = List.copyOf(blockedBy);
    }
  }
}
