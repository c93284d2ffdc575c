package dev.fcap.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.model.Defer;
import dev.fcap.model.Message;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.guard.Messages;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * Reads a message from its JSON object strictly: unknown fields, wrong types and bad values are
 * refused with the field named, never ignored or coerced ({@code "cost": "2"} is an error, not 2).
 */
final class MessageReader {
  static final Set<String> FIELDS = Set.of("tenant", "recipient", "channel", "sender", "category", "content",
      "contentKey", "attributes", "cost", "messageId", "timeZone", "priority", "override", "defer", "notAfter");

  private MessageReader() {}

  /** The message in {@code node}; {@code extra} names further allowed fields (e.g. {@code dryRun}). */
  static Message read(JsonNode node, Set<String> extra) {
    if (node == null || !node.isObject()) {
      throw ApiException.badRequest("invalid_type", "expected a JSON object with at least a recipient", null);
    }
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!FIELDS.contains(f) && !extra.contains(f)) {
        throw ApiException.badRequest("unknown_field", "unknown field '" + f + "'; known fields: tenant, recipient, "
            + "channel, sender, category, content, contentKey, attributes, cost, messageId, timeZone, priority, override, "
            + "defer, notAfter"
            + (extra.isEmpty() ? "" : ", " + String.join(", ", extra)), f);
      }
    }
    String recipient = string(node, "recipient");
    if (recipient == null) {
      throw ApiException.badRequest("missing_field", "recipient is required", "recipient");
    }
    Defer defer = Messages.defer(bool(node, "defer"), notAfter(node));
    Message m = Messages.of(string(node, "tenant"), recipient, string(node, "channel"), string(node, "sender"),
        string(node, "category"), string(node, "content"), string(node, "contentKey"), attributes(node), cost(node),
        string(node, "messageId"), Messages.timeZone(string(node, "timeZone")),
        Messages.priority(string(node, "priority")), bool(node, "override"));
    return defer == null ? m : m.withDefer(defer);
  }

  /**
   * The latest instant a deferred message may be booked at, as epoch milliseconds (a JSON integer) or
   * an ISO-8601 instant ({@code "2026-11-28T09:00:00Z"}); null when absent (the default applies).
   */
  private static Long notAfter(JsonNode node) {
    JsonNode n = node.get("notAfter");
    if (n == null || n.isNull()) {
      return null;
    }
    if (n.isTextual()) {
      return Messages.instant("notAfter", n.textValue());
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong()) {
      throw ApiException.badRequest("invalid_type", "notAfter must be epoch milliseconds (an integer) or an ISO-8601 "
          + "instant such as \"2026-11-28T09:00:00Z\", got " + kind(n), "notAfter");
    }
    return n.longValue();
  }

  static String string(JsonNode node, String field) {
    JsonNode n = node.get(field);
    if (n == null || n.isNull()) {
      return null;
    }
    if (!n.isTextual()) {
      throw ApiException.badRequest("invalid_type", field + " must be a string, got " + kind(n), field);
    }
    return n.textValue();
  }

  static boolean bool(JsonNode node, String field) {
    JsonNode n = node.get(field);
    if (n == null || n.isNull()) {
      return false;
    }
    if (!n.isBoolean()) {
      throw ApiException.badRequest("invalid_type", field + " must be true or false, got " + kind(n), field);
    }
    return n.booleanValue();
  }

  private static long cost(JsonNode node) {
    JsonNode n = node.get("cost");
    if (n == null || n.isNull()) {
      return 1;
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong()) {
      throw ApiException.badRequest("invalid_type", "cost must be a positive integer, got " + kind(n), "cost");
    }
    long cost = n.longValue();
    if (cost < 1 || cost > Message.MAX_COST) {
      throw ApiException.badRequest("invalid_field", "cost must be between 1 and " + Message.MAX_COST + ", got "
          + cost, "cost");
    }
    return cost;
  }

  private static Map<String, String> attributes(JsonNode node) {
    JsonNode n = node.get("attributes");
    if (n == null || n.isNull()) {
      return Map.of();
    }
    if (!n.isObject()) {
      throw ApiException.badRequest("invalid_type", "attributes must be an object of strings, got " + kind(n),
          "attributes");
    }
    Map<String, String> out = new HashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getValue().isTextual()) {
        throw ApiException.badRequest("invalid_type", "attributes." + e.getKey() + " must be a string, got "
            + kind(e.getValue()), "attributes." + e.getKey());
      }
      out.put(e.getKey(), e.getValue().textValue());
    }
    return out;
  }

  static String kind(JsonNode n) {
    return switch (n.getNodeType()) {
      case STRING -> "a string";
      case NUMBER -> "a number";
      case BOOLEAN -> "a boolean";
      case ARRAY -> "an array";
      case OBJECT -> "an object";
      case NULL -> "null";
      default -> n.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    };
  }
}
