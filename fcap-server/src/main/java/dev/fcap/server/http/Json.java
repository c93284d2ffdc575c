package dev.fcap.server.http;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import dev.fcap.engine.BookedView;
import dev.fcap.engine.CounterView;
import dev.fcap.engine.Inspection;
import dev.fcap.engine.WindowView;
import dev.fcap.model.Condition;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.RuleOutcome;
import dev.fcap.policy.PolicyError;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.guard.InputLimits;
import dev.fcap.server.audit.RecentDenials;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/** JSON in and out: strict parsing, and streaming writers for the hot responses. */
final class Json {
  static final ObjectMapper MAPPER = JsonMapper.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .build();
  private static final JsonFactory FACTORY = MAPPER.getFactory();
  /** A response scratch buffer grown past this is dropped after use (see {@link #bytes}). */
  private static final int SCRATCH_KEPT = 64 * 1024;
  /** Used only inside {@link #bytes}, which no body writer calls again: one response at a time per thread. */
  private static final ThreadLocal<ByteArrayOutputStream> SCRATCH =
      ThreadLocal.withInitial(() -> new ByteArrayOutputStream(4096));

  private Json() {}

  /**
   * Parses a request body in one pass, held to {@code limits} as it is read ({@link BodyShape}): the
   * only way a handler reads a body. Malformed JSON is a 400 {@code invalid_json} saying where; a body
   * past a limit, a 400 naming the field, its code told to {@code refused} first.
   */
  static JsonNode parse(byte[] body, InputLimits limits, Consumer<String> refused) {
    if (body.length == 0) {
      throw ApiException.badRequest("invalid_json", "the request body is empty; send a JSON object", null);
    }
    try (JsonParser p = new BodyShape(FACTORY.createParser(body), limits, refused)) {
      JsonNode n = MAPPER.readTree(p);
      if (n == null || n.isMissingNode()) {
        throw ApiException.badRequest("invalid_json", "the request body is empty; send a JSON object", null);
      }
      return n;
    } catch (JsonProcessingException e) {
      String where = e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr() + ", column "
          + e.getLocation().getColumnNr();
      throw ApiException.badRequest("invalid_json", "malformed JSON" + where + ": " + e.getOriginalMessage(), null);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Writes a response body with a generator. */
  interface Body {
    void write(JsonGenerator g) throws IOException;
  }

  static HttpResponse response(HttpStatus status, Body body) {
    return HttpResponse.of(ResponseHeaders.of(status, com.linecorp.armeria.common.HttpHeaderNames.CONTENT_TYPE,
        MediaType.JSON_UTF_8), HttpData.wrap(bytes(body)));
  }

  static HttpResponse ok(Body body) {
    return response(HttpStatus.OK, body);
  }

  /**
   * The body's bytes, written into this thread's scratch buffer and copied out at their exact size: a
   * new buffer per response would grow three times for a decision's ~700 bytes, about a tenth of what
   * the server allocates per decision. A buffer that a large response (a batch)
   * grew past {@link #SCRATCH_KEPT} is dropped, not kept for the thread's life.
   */
  static byte[] bytes(Body body) {
    ByteArrayOutputStream out = SCRATCH.get();
    out.reset();
    try (JsonGenerator g = FACTORY.createGenerator(out, JsonEncoding.UTF8)) {
      body.write(g);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      if (out.size() > SCRATCH_KEPT) {
        SCRATCH.remove();
      }
    }
    return out.toByteArray();
  }

  static HttpResponse error(ApiException e) {
    return response(HttpStatus.valueOf(e.status()), g -> {
      g.writeStartObject();
      writeErrorField(g, e);
      g.writeEndObject();
    });
  }

  static void writeErrorField(JsonGenerator g, ApiException e) throws IOException {
    g.writeObjectFieldStart("error");
    g.writeStringField("code", e.code());
    g.writeStringField("message", e.getMessage());
    if (e.field() == null) {
      g.writeNullField("field");
    } else {
      g.writeStringField("field", e.field());
    }
    if (!e.details().isEmpty()) {
      g.writeArrayFieldStart("errors");
      for (Object d : e.details()) {
        if (d instanceof PolicyError pe) {
          g.writeStartObject();
          g.writeStringField("tenant", pe.tenant());
          g.writeStringField("rule", pe.ruleId());
          g.writeStringField("field", pe.field());
          g.writeStringField("message", pe.message());
          g.writeEndObject();
        } else {
          g.writeString(String.valueOf(d));
        }
      }
      g.writeEndArray();
    }
    g.writeEndObject();
  }

  // field names of the hot responses, encoded once (writing a String name re-encodes it every time)
  private static final SerializedString ALLOWED = new SerializedString("allowed");
  private static final SerializedString DECISION_ID = new SerializedString("decisionId");
  private static final SerializedString RETRY_AFTER_MS = new SerializedString("retryAfterMs");
  private static final SerializedString BLOCKED_BY = new SerializedString("blockedBy");
  private static final SerializedString SHADOW_BLOCKED_BY = new SerializedString("shadowBlockedBy");
  private static final SerializedString RULES = new SerializedString("rules");
  private static final SerializedString ID = new SerializedString("id");
  private static final SerializedString LIMIT = new SerializedString("limit");
  private static final SerializedString BOUND = new SerializedString("bound");
  private static final SerializedString WINDOW_MS = new SerializedString("windowMs");
  private static final SerializedString USED = new SerializedString("used");
  private static final SerializedString REMAINING = new SerializedString("remaining");
  private static final SerializedString ENFORCED = new SerializedString("enforced");
  private static final SerializedString DEGRADED = new SerializedString("degraded");
  private static final SerializedString POLICY_VERSION = new SerializedString("policyVersion");
  private static final SerializedString TIME = new SerializedString("time");
  private static final SerializedString SEND_AT = new SerializedString("sendAt");
  private static final SerializedString DEFERRED = new SerializedString("deferred");

  static void decision(JsonGenerator g, Decision d) throws IOException {
    g.writeStartObject();
    g.writeFieldName(ALLOWED);
    g.writeBoolean(d.allowed());
    g.writeFieldName(DECISION_ID);
    g.writeString(d.decisionId());
    g.writeFieldName(RETRY_AFTER_MS);
    g.writeNumber(d.retryAfterMs());
    if (!d.allowed()) { // only then: when a refused message may go, epoch milliseconds, or -1 for never
      g.writeFieldName(SEND_AT);
      g.writeNumber(d.sendAt());
    }
    g.writeFieldName(DEFERRED); // true: booked for sendAt, counted there; release it by decisionId if not sent
    g.writeBoolean(d.deferred());
    strings(g, BLOCKED_BY, d.blockedBy());
    strings(g, SHADOW_BLOCKED_BY, d.shadowBlockedBy());
    g.writeFieldName(RULES);
    g.writeStartArray();
    for (RuleOutcome r : d.rules()) {
      g.writeStartObject();
      g.writeFieldName(ID);
      g.writeString(r.id());
      g.writeFieldName(LIMIT);
      g.writeNumber(r.limit());
      if (r.bound() != r.limit()) { // only then: the count this message's priority could reach (headroom)
        g.writeFieldName(BOUND);
        g.writeNumber(r.bound());
      }
      g.writeFieldName(WINDOW_MS);
      g.writeNumber(r.windowMs());
      g.writeFieldName(USED);
      g.writeNumber(r.used());
      g.writeFieldName(REMAINING);
      g.writeNumber(r.remaining());
      g.writeFieldName(ALLOWED);
      g.writeBoolean(r.allowed());
      g.writeFieldName(ENFORCED);
      g.writeBoolean(r.enforced());
      g.writeFieldName(RETRY_AFTER_MS);
      g.writeNumber(r.retryAfterMs());
      if (!r.allowed()) {
        g.writeFieldName(SEND_AT);
        g.writeNumber(r.sendAt());
      }
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeFieldName(DEGRADED);
    g.writeBoolean(d.degraded());
    if (d.degradedReason() != null) { // only when degraded: store_down, store_full or store_reset
      g.writeStringField("degradedReason", d.degradedReason());
    }
    if (d.suppressedReason() != null) { // only when the recipient is suppressed for this message
      g.writeStringField("suppressedReason", d.suppressedReason());
    }
    if (d.replayed()) {
      g.writeBooleanField("replayed", true); // only then: the first decision of this messageId, again
    }
    g.writeFieldName(POLICY_VERSION);
    g.writeNumber(d.policyVersion());
    g.writeFieldName(TIME);
    g.writeNumber(d.time());
    g.writeEndObject();
  }

  private static void strings(JsonGenerator g, SerializedString name, List<String> values) throws IOException {
    g.writeFieldName(name);
    g.writeStartArray();
    for (String v : values) {
      g.writeString(v);
    }
    g.writeEndArray();
  }

  static void inspection(JsonGenerator g, Inspection i, boolean degraded, List<RecentDenials.Denial> denials)
      throws IOException {
    g.writeStartObject();
    g.writeStringField("tenant", i.tenant());
    g.writeStringField("recipient", i.recipient());
    g.writeNumberField("time", i.time());
    g.writeNumberField("policyVersion", i.policyVersion());
    g.writeBooleanField("degraded", degraded);
    g.writeArrayFieldStart("counters");
    for (CounterView c : i.counters()) {
      g.writeStartObject();
      g.writeStringField("rule", c.ruleId());
      g.writeNumberField("limit", c.limit());
      g.writeNumberField("windowMs", c.windowMs());
      g.writeBooleanField("enforced", c.enforced());
      g.writeObjectFieldStart("values");
      for (Map.Entry<String, String> v : c.values().entrySet()) {
        g.writeStringField(v.getKey(), v.getValue());
      }
      g.writeEndObject();
      g.writeNumberField("used", c.used());
      g.writeNumberField("remaining", c.remaining());
      g.writeNumberField("freesInMs", c.freesInMs());
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeStringField("timeZone", i.timeZone().getId());
    g.writeArrayFieldStart("windows");
    for (WindowView w : i.windows()) {
      g.writeStartObject();
      g.writeStringField("rule", w.ruleId());
      g.writeBooleanField("enforced", w.enforced());
      g.writeStringField("zone", w.zone().getId());
      g.writeBooleanField("open", w.open());
      g.writeNumberField("opensAt", w.opensAt());
      condition(g, "match", w.match());
      condition(g, "exempt", w.exempt());
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeArrayFieldStart("booked"); // messages deferred to after the inspection's time, by time
    for (BookedView b : i.booked()) {
      g.writeStartObject();
      strings(g, "rules", b.rules());
      g.writeObjectFieldStart("values");
      for (Map.Entry<String, String> v : b.values().entrySet()) {
        g.writeStringField(v.getKey(), v.getValue());
      }
      g.writeEndObject();
      g.writeNumberField("time", b.time());
      g.writeNumberField("cost", b.cost());
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeArrayFieldStart("recentDenials");
    for (RecentDenials.Denial d : denials) {
      g.writeStartObject();
      g.writeStringField("decisionId", d.decisionId());
      g.writeNumberField("time", d.time());
      strings(g, "blockedBy", d.blockedBy());
      if (d.channel() != null) {
        g.writeStringField("channel", d.channel());
      }
      if (d.category() != null) {
        g.writeStringField("category", d.category());
      }
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  /** A rule condition as the rules format writes it: dimension to its values; empty when any message. */
  private static void condition(JsonGenerator g, String name, Condition c) throws IOException {
    g.writeObjectFieldStart(name);
    for (Map.Entry<Dimension, Set<String>> e : c.values().entrySet()) {
      g.writeArrayFieldStart(e.getKey().toString());
      for (String v : e.getValue()) {
        g.writeString(v);
      }
      g.writeEndArray();
    }
    g.writeEndObject();
  }

  static void strings(JsonGenerator g, String name, List<String> values) throws IOException {
    g.writeArrayFieldStart(name);
    for (String v : values) {
      g.writeString(v);
    }
    g.writeEndArray();
  }

}
