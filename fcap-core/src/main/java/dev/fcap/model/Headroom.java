package dev.fcap.model;

/**
 * The units of a counter rule's limit kept free for the classes above each {@link Priority}: a
 * message of class p passes the rule iff {@code used + cost <= limit - of(p)}. {@code critical} has
 * none (no class is above it). Validated by {@link dev.fcap.policy.PolicyParser}: each value is
 * between 0 and the limit, and a lower class never keeps less than a higher one.
 */
public record Headroom(long high, long normal, long low) {
  public static final Headroom NONE = new Headroom(0, 0, 0);

  /** The headroom a message of {@code priority} must leave. */
  public long of(Priority priority) {
    return switch (priority) {
      case CRITICAL -> 0;
      case HIGH -> high;
      case NORMAL -> normal;
      case LOW -> low;
    };
  }

  public boolean isNone() {
    return high == 0 && normal == 0 && low == 0;
  }
}
