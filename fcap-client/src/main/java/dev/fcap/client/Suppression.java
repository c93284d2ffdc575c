package dev.fcap.client;

import java.util.List;

/**
 * A recipient's entry in a tenant's suppression list: every decision for it on the listed channels
 * and categories (empty: every one) is refused, until {@code expiresAt}.
 *
 * @param recipient the recipient
 * @param channels the channels it covers; empty: every channel
 * @param categories the categories it covers; empty: every category
 * @param reason why; the refusals carry it as {@link Decision#suppressedReason()}
 * @param addedBy the API key that added it ({@code local} on a server without keys)
 * @param addedAt when (epoch ms)
 * @param expiresAt when it stops applying (epoch ms), or -1: never
 */
public record Suppression(String recipient, List<String> channels, List<String> categories, String reason,
    String addedBy, long addedAt, long expiresAt) {

  public Suppression {
    channels = List.copyOf(channels);
    categories = List.copyOf(categories);
  }
}
