package dev.fcap.model;

import java.util.List;

/**
 * An entry of a tenant's suppression list: {@link #recipient()} must receive nothing on the listed
 * channels and categories (an empty list: every one) until {@link #expiresAt()}. A decision for a
 * message in its scope is refused with {@link #BLOCKED_BY} among the blocking rules and nothing is
 * recorded; no override passes it.
 *
 * @param recipient the recipient, as messages name it
 * @param channels the channels it covers; empty: every channel
 * @param categories the categories it covers; empty: every category
 * @param reason why (shown in the refusals); may be empty
 * @param addedBy who added it: an API key's name, or {@code anonymous}
 * @param addedAt when (epoch ms)
 * @param expiresAt when it stops applying (epoch ms), or {@link #NEVER}
 */
public record Suppression(String recipient, List<String> channels, List<String> categories, String reason,
    String addedBy, long addedAt, long expiresAt) {

  /** What a suppressed refusal lists among its blocking rules. */
  public static final String BLOCKED_BY = "suppressed";
  /** {@link #expiresAt()} of an entry that applies until removed. */
  public static final long NEVER = -1;
  /** The longest reason, in characters. */
  public static final int MAX_REASON_LENGTH = 256;
  /** The most channels, and the most categories, one entry lists. */
  public static final int MAX_SCOPES = 32;

  public Suppression {
    requireId("recipient", recipient);
    channels = scopes("channels", channels);
    categories = scopes("categories", categories);
    reason = reason == null ? "" : reason;
    if (reason.length() > MAX_REASON_LENGTH) {
      throw new InvalidMessageException("reason", "reason is longer than " + MAX_REASON_LENGTH + " characters");
    }
    requireId("addedBy", addedBy);
    if (expiresAt != NEVER && expiresAt <= 0) {
      throw new InvalidMessageException("expiresAt", "expiresAt must be an epoch-millisecond instant, or -1 for never");
    }
  }

  /** Whether it applies at {@code now} to a message on {@code channel} of {@code category} (each may be null). */
  public boolean covers(String channel, String category, long now) {
    return (expiresAt == NEVER || now < expiresAt)
        && (channels.isEmpty() || channel != null && channels.contains(channel))
        && (categories.isEmpty() || category != null && categories.contains(category));
  }

  /** Whether it has expired at {@code now}. */
  public boolean expiredAt(long now) {
    return expiresAt != NEVER && now >= expiresAt;
  }

  private static List<String> scopes(String field, List<String> values) {
    if (values == null) {
      return List.of();
    }
    if (values.size() > MAX_SCOPES) {
      throw new InvalidMessageException(field, field + " lists more than " + MAX_SCOPES + " values");
    }
    for (String v : values) {
      requireId(field, v);
    }
    return List.copyOf(values);
  }

  private static void requireId(String field, String value) {
    if (value == null || value.isEmpty()) {
      throw new InvalidMessageException(field, field + " must not be empty");
    }
    if (value.length() > Message.MAX_ID_LENGTH) {
      throw new InvalidMessageException(field, field + " is longer than " + Message.MAX_ID_LENGTH + " characters");
    }
  }
}
