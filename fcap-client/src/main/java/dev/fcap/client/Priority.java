package dev.fcap.client;

import java.util.Locale;

/**
 * How much of a rule's limit a message may use: a rule may keep headroom free for the classes above
 * a class, so that a day filled by {@code LOW} marketing still has room for {@code HIGH} notices.
 */
public enum Priority {
  CRITICAL,
  HIGH,
  NORMAL,
  LOW;

  /** The name the server takes: {@code critical}, {@code high}, {@code normal}, {@code low}. */
  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }
}
