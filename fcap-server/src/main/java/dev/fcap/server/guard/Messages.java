package dev.fcap.server.guard;

import dev.fcap.model.Defer;
import dev.fcap.model.InvalidMessageException;
import dev.fcap.model.Message;
import dev.fcap.model.Priority;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The checks every incoming message passes, whichever API it came through, before the engine sees
 * it. On top of {@link Message}'s own checks (required recipient, lengths, cost range): tenants use
 * the rule-id alphabet, identifiers contain no control characters and are not blank, content is at most
 * {@link #MAX_CONTENT} characters.
 */
public final class Messages {
  public static final int MAX_CONTENT = 64 * 1024;
  private static final Pattern TENANT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,127}");
  /** The longest IANA id is 32 characters; a longer one is refused without a lookup. */
  private static final int MAX_ZONE_ID = 64;
  /** Bounds the kept zones: fixed offsets such as {@code +05:30} are many more than the named zones. */
  private static final int MAX_KEPT_ZONES = 2_048;
  private static final ConcurrentHashMap<String, ZoneId> ZONES = new ConcurrentHashMap<>();

  private Messages() {}

  /** A validated message; throws a 400 {@link ApiException} naming the field. */
  public static Message of(String tenant, String recipient, String channel, String sender, String category,
      String content, String contentKey, Map<String, String> attributes, long cost) {
    return of(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost, null);
  }

  /** A validated message with the caller's message id (null: none). */
  public static Message of(String tenant, String recipient, String channel, String sender, String category,
      String content, String contentKey, Map<String, String> attributes, long cost, String messageId) {
    return of(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost, messageId, null);
  }

  /** A validated message with the caller's message id and the recipient's time zone (null: none). */
  public static Message of(String tenant, String recipient, String channel, String sender, String category,
      String content, String contentKey, Map<String, String> attributes, long cost, String messageId,
      ZoneId timeZone) {
    return of(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost, messageId, timeZone,
        null, false);
  }

  /**
   * A validated message with its message id, time zone and priority (each null: none, the default),
   * and whether it overrides every rule (the caller's authority is checked where it is decided).
   */
  public static Message of(String tenant, String recipient, String channel, String sender, String category,
      String content, String contentKey, Map<String, String> attributes, long cost, String messageId,
      ZoneId timeZone, Priority priority, boolean override) {
    if (tenant != null && !TENANT.matcher(tenant).matches()) {
      throw invalid("tenant", "tenant must be 1-128 of letters, digits, '.', '_', ':', '-' starting with a letter "
          + "or digit");
    }
    id("recipient", recipient);
    id("channel", channel);
    id("sender", sender);
    id("category", category);
    id("contentKey", contentKey);
    id("messageId", messageId);
    if (attributes != null) {
      attributes.forEach((k, v) -> {
        id("attributes", k);
        id("attributes." + k, v);
      });
    }
    if (content != null && content.length() > MAX_CONTENT) {
      throw invalid("content", "content is longer than " + MAX_CONTENT + " characters");
    }
    try {
      return new Message(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost,
          messageId, timeZone, priority, override);
    } catch (InvalidMessageException e) {
      throw invalid(e.field(), e.getMessage());
    }
  }

  /**
   * The deferral a message asks for: none unless {@code defer}; {@code notAfter} (epoch ms, null: the
   * policy's longest window) without {@code defer} is a 400 {@code invalid_field} naming it: the caller
   * surely meant to defer, and ignoring it would refuse the message instead.
   */
  public static Defer defer(boolean defer, Long notAfter) {
    if (!defer) {
      if (notAfter != null) {
        throw invalid("notAfter", "notAfter applies only to a deferred message: add \"defer\": true, or drop notAfter");
      }
      return null;
    }
    if (notAfter == null) {
      return Defer.BY_DEFAULT;
    }
    if (notAfter <= 0) {
      throw invalid("notAfter", "notAfter must be an instant after 1970 (epoch milliseconds), got " + notAfter);
    }
    return new Defer(notAfter);
  }

  /** An ISO-8601 instant ({@code 2026-11-28T09:00:00Z}) as epoch ms; anything else is a 400 naming {@code field}. */
  public static long instant(String field, String text) {
    try {
      return Instant.parse(text).toEpochMilli();
    } catch (DateTimeParseException | ArithmeticException e) {
      String shown = text.length() > 64 ? text.substring(0, 64) + "..." : text;
      throw invalid(field, field + " must be epoch milliseconds or an ISO-8601 instant such as "
          + "2026-11-28T09:00:00Z, got '" + shown + "'");
    }
  }

  /** The priority named by {@code id} (null: none, normal); another name is a 400 {@code invalid_priority}. */
  public static Priority priority(String id) {
    if (id == null) {
      return null;
    }
    return Priority.fromId(id).orElseThrow(() -> new ApiException(400, "invalid_priority", "unknown priority '"
        + (id.length() > 64 ? id.substring(0, 64) + "...'" : id + "'") + "; one of " + Priority.ids(), "priority"));
  }

  /**
   * The time zone named by {@code id}, an IANA id such as {@code America/New_York} (null: none); an
   * unknown id is a 400 {@code invalid_time_zone} naming the field. Zones found are kept (a few
   * hundred exist), so a message's zone costs one map read.
   */
  public static ZoneId timeZone(String id) {
    if (id == null) {
      return null;
    }
    ZoneId known = ZONES.get(id);
    if (known != null) {
      return known;
    }
    ZoneId zone;
    try {
      zone = id.length() > MAX_ZONE_ID ? null : ZoneId.of(id);
    } catch (DateTimeException e) {
      zone = null;
    }
    if (zone == null) {
      throw new ApiException(400, "invalid_time_zone", "unknown time zone '" + (id.length() > MAX_ZONE_ID
          ? id.substring(0, MAX_ZONE_ID) + "...'" : id + "'") + "; use an IANA id such as America/New_York or "
          + "Asia/Kolkata", "timeZone");
    }
    if (ZONES.size() < MAX_KEPT_ZONES) {
      ZONES.putIfAbsent(id, zone);
    }
    return zone;
  }

  /** A validated tenant (null means the default tenant). */
  public static String tenant(String tenant) {
    if (tenant == null || tenant.isEmpty()) {
      return Message.DEFAULT_TENANT;
    }
    if (!TENANT.matcher(tenant).matches()) {
      throw invalid("tenant", "tenant must be 1-128 of letters, digits, '.', '_', ':', '-'");
    }
    return tenant;
  }

  /** A validated recipient id for inspect and reset. */
  public static String recipient(String recipient) {
    if (recipient == null || recipient.isEmpty()) {
      throw invalid("recipient", "recipient is required and must not be empty");
    }
    if (recipient.length() > Message.MAX_ID_LENGTH) {
      throw invalid("recipient", "recipient is longer than " + Message.MAX_ID_LENGTH + " characters");
    }
    id("recipient", recipient);
    return recipient;
  }

  /**
   * An identifier: no control characters, and not blank. {@code " "} as a recipient is almost surely a
   * caller's bug, and would silently share one counter among every such message.
   */
  private static void id(String field, String value) {
    noControl(field, value);
    if (value != null && !value.isEmpty() && blank(value)) {
      throw invalid(field, field + " must not be blank (only white space)");
    }
  }

  /** Only white space, the non-breaking kinds included. */
  static boolean blank(String value) {
    return value.codePoints().allMatch(c -> Character.isWhitespace(c) || Character.isSpaceChar(c));
  }

  private static void noControl(String field, String value) {
    if (value == null) {
      return;
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c) || Character.isSurrogate(c) && !validSurrogate(value, i)) {
        throw invalid(field, field + " contains a control character or broken UTF-16 at position " + i);
      }
      if (Character.isHighSurrogate(c)) {
        i++;
      }
    }
  }

  private static boolean validSurrogate(String s, int i) {
    return Character.isHighSurrogate(s.charAt(i)) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
  }

  private static ApiException invalid(String field, String message) {
    return new ApiException(400, "invalid_field", message, field);
  }
}
