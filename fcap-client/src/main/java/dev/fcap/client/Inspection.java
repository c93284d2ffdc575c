package dev.fcap.client;

import java.util.List;
import java.util.Map;

/** A recipient's counters ({@link FcapClient#inspect}): why was it blocked, when does it free up. */
public record Inspection(String tenant, String recipient, long time, long policyVersion, boolean degraded,
    List<Counter> counters, List<Denial> recentDenials) {

  public Inspection {
    counters = List.copyOf(counters);
    recentDenials = List.copyOf(recentDenials);
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
