package dev.fcap.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON of the HTTP API (fcap-server's /openapi.json), mapped by hand: no annotations, no reflection. */
final class Codec {
  static final ObjectMapper MAPPER = new ObjectMapper();

  private Codec() {}

  static ObjectNode message(Message m, String messageId) {
    ObjectNode n = MAPPER.createObjectNode();
    put(n, "tenant", m.tenant());
    n.put("recipient", m.recipient());
    put(n, "channel", m.channel());
    put(n, "sender", m.sender());
    put(n, "category", m.category());
    put(n, "content", m.content());
    put(n, "contentKey", m.contentKey());
    if (!m.attributes().isEmpty()) {
      ObjectNode a = n.putObject("attributes");
      m.attributes().forEach(a::put);
    }
    if (m.cost() != 1) {
      n.put("cost", m.cost());
    }
    put(n, "messageId", messageId);
    if (m.priority() != null) {
      n.put("priority", m.priority().id());
    }
    if (m.override()) {
      n.put("override", true);
    }
    if (m.timeZone() != null) {
      n.put("timeZone", m.timeZone().getId());
    }
    if (m.defer() != null) {
      n.put("defer", true);
      if (m.defer().notAfter() != null) {
        n.put("notAfter", m.defer().notAfter().toEpochMilli());
      }
    }
    return n;
  }

  private static void put(ObjectNode n, String field, String value) {
    if (value != null) {
      n.put(field, value);
    }
  }

  static byte[] bytes(JsonNode n) {
    try {
      return MAPPER.writeValueAsBytes(n);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  static JsonNode tree(byte[] body) {
    if (body == null || body.length == 0) {
      return null;
    }
    try {
      return MAPPER.readTree(body);
    } catch (IOException e) {
      throw new FcapException(0, "invalid_response", "the server's answer is not JSON: " + e.getMessage(), null, e);
    }
  }

  /** The error of a non-2xx answer; a body that is not fcap's error shape (a proxy's page) gets {@code http_NNN}. */
  static FcapException error(int status, byte[] body) {
    JsonNode n;
    try {
      n = body == null || body.length == 0 ? null : MAPPER.readTree(body);
    } catch (IOException e) {
      n = null;
    }
    return error(status, n == null ? null : n.get("error"));
  }

  static FcapException error(int status, JsonNode e) {
    if (e == null || !e.isObject()) {
      return new FcapException(status, "http_" + status, "HTTP " + status, null);
    }
    JsonNode field = e.get("field");
    return new FcapException(status, e.path("code").asText("http_" + status), e.path("message").asText(""),
        field == null || field.isNull() ? null : field.asText());
  }

  static Decision decision(JsonNode n, String messageId) {
    List<RuleOutcome> rules = new ArrayList<>();
    for (JsonNode r : n.path("rules")) {
      rules.add(new RuleOutcome(r.path("id").asText(), r.path("limit").asLong(), r.path("windowMs").asLong(),
          r.path("used").asLong(), r.path("remaining").asLong(), r.path("allowed").asBoolean(),
          r.path("enforced").asBoolean(), r.path("retryAfterMs").asLong(), r.path("sendAt").asLong(0),
          r.path("bound").asLong(r.path("limit").asLong())));
    }
    String id = n.hasNonNull("messageId") ? n.get("messageId").asText() : messageId;
    return new Decision(n.path("allowed").asBoolean(), n.path("decisionId").asText(null),
        n.path("retryAfterMs").asLong(), strings(n.path("blockedBy")), strings(n.path("shadowBlockedBy")), rules,
        n.path("degraded").asBoolean(), n.path("replayed").asBoolean(), n.path("policyVersion").asLong(),
        n.path("time").asLong(), id, false, null, n.path("sendAt").asLong(0), n.path("suppressedReason").asText(null),
        n.path("deferred").asBoolean());
  }

  static Suppression suppression(JsonNode n) {
    return new Suppression(n.path("recipient").asText(), strings(n.path("channels")), strings(n.path("categories")),
        n.path("reason").asText(), n.path("addedBy").asText(), n.path("addedAt").asLong(), n.path("expiresAt").asLong());
  }

  static Inspection inspection(JsonNode n) {
    List<Inspection.Counter> counters = new ArrayList<>();
    for (JsonNode c : n.path("counters")) {
      Map<String, String> values = new LinkedHashMap<>();
      c.path("values").fields().forEachRemaining(e -> values.put(e.getKey(), e.getValue().asText()));
      counters.add(new Inspection.Counter(c.path("rule").asText(), c.path("limit").asLong(),
          c.path("windowMs").asLong(), c.path("enforced").asBoolean(), values, c.path("used").asLong(),
          c.path("remaining").asLong(), c.path("freesInMs").asLong()));
    }
    List<Inspection.Denial> denials = new ArrayList<>();
    for (JsonNode d : n.path("recentDenials")) {
      denials.add(new Inspection.Denial(d.path("decisionId").asText(), d.path("time").asLong(),
          strings(d.path("blockedBy")), d.path("channel").asText(null), d.path("category").asText(null)));
    }
    List<Inspection.Window> windows = new ArrayList<>();
    for (JsonNode w : n.path("windows")) {
      windows.add(new Inspection.Window(w.path("rule").asText(), w.path("enforced").asBoolean(),
          java.time.ZoneId.of(w.path("zone").asText()), w.path("open").asBoolean(), w.path("opensAt").asLong(),
          condition(w.path("match")), condition(w.path("exempt"))));
    }
    java.time.ZoneId zone = n.hasNonNull("timeZone") ? java.time.ZoneId.of(n.path("timeZone").asText())
        : java.time.ZoneOffset.UTC;
    return new Inspection(n.path("tenant").asText(), n.path("recipient").asText(), n.path("time").asLong(),
        n.path("policyVersion").asLong(), n.path("degraded").asBoolean(), counters, denials, zone, windows);
  }

  private static Map<String, java.util.Set<String>> condition(JsonNode c) {
    Map<String, java.util.Set<String>> out = new LinkedHashMap<>();
    c.fields().forEachRemaining(e -> out.put(e.getKey(), new java.util.LinkedHashSet<>(strings(e.getValue()))));
    return out;
  }

  static ArrayNode array() {
    return MAPPER.createArrayNode();
  }

  private static List<String> strings(JsonNode a) {
    List<String> out = new ArrayList<>(a.size());
    a.forEach(v -> out.add(v.asText()));
    return out;
  }
}
