package dev.fcap.model;

/**
 * How much a message matters when a shared cap runs short. A counter rule may keep
 * {@link Headroom} free for the classes above a class: a message of class p is admitted by the rule
 * only while at least {@code headroom[p]} units of the limit remain after it. Every message counts
 * in the same counter, whatever its class.
 */
public enum Priority {
  CRITICAL("critical"),
  HIGH("high"),
  NORMAL("normal"),
  LOW("low");

  private static final Priority[] VALUES = values();

  private final String id;

  Priority(String id) {
    this.id = id;
  }

  public String id() {
    return id;
  }

  /** The priority named {@code id} ({@code critical}, {@code high}, {@code normal}, {@code low}). */
  public static java.util.Optional<Priority> fromId(String id) {
    for (Priority p : VALUES) {
      if (p.id.equals(id)) {
        return java.util.Optional.of(p);
      }
    }
    return java.util.Optional.empty();
  }

  /** The names a caller may give, for error messages. */
  public static String ids() {
    return "critical, high, normal, low";
  }

  @Override
  public String toString() {
    return id;
  }
}
