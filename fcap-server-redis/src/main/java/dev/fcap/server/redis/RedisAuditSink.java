package dev.fcap.server.redis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.server.audit.AuditEvent;
import dev.fcap.server.audit.AuditSink;
import io.lettuce.core.XAddArgs;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Audit events to a Redis Stream: one {@code XADD key MAXLEN ~ maxLen * field value ...} per event,
 * a batch sent pipelined and awaited together. The approximate trim ({@code ~}) lets Redis drop whole
 * radix-tree nodes, so trimming costs next to nothing; the stream holds at least {@code maxLen}
 * entries. Fields are the audit line's, flat (lists comma-separated, {@code counts} as JSON), and a
 * field without a value is left out. A failing batch fails {@link #write}, and the audit log counts
 * its events as dropped: decisions never wait for Redis here. Events other than decisions (rule
 * changes, resets) go to a stream of their own, {@code STREAM:admin}, trimmed on its own, so
 * that decision traffic never trims a rule change away.
 */
final class RedisAuditSink implements AuditSink {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final RedisEndpoint endpoint;
  private final RedisEndpoint.Link link;
  private final String stream;
  private final String adminStream;
  private final XAddArgs trim;
  private final long batchTimeoutMs;

  RedisAuditSink(RedisEndpoint endpoint, RedisEndpoint.Link link, String stream, long maxLen, long batchTimeoutMs) {
    this.endpoint = endpoint;
    this.link = link;
    this.stream = stream;
    this.adminStream = stream + ":admin";
    this.trim = new XAddArgs().maxlen(maxLen).approximateTrimming(true);
    this.batchTimeoutMs = batchTimeoutMs;
  }

  @Override
  public void write(List<AuditEvent> events) throws IOException {
    List<CompletableFuture<String>> sent = new ArrayList<>(events.size());
    for (AuditEvent e : events) {
      sent.add(link.async().xadd(e.isDecision() ? stream : adminStream, trim, fields(e)).toCompletableFuture());
    }
    try {
      CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(batchTimeoutMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while writing the audit to Redis", e);
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new IOException("XADD to " + stream + " at " + endpoint.redacted() + " failed: " + cause, cause);
    }
  }

  static Map<String, String> fields(AuditEvent e) throws JsonProcessingException {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("type", e.type());
    f.put("time", Long.toString(e.time()));
    put(f, "decisionId", e.decisionId());
    put(f, "tenant", e.tenant());
    put(f, "recipient", e.recipient());
    put(f, "channel", e.channel());
    put(f, "category", e.category());
    if (e.blockedBy() != null && !e.blockedBy().isEmpty()) {
      f.put("blockedBy", String.join(",", e.blockedBy()));
    }
    if (e.shadowBlockedBy() != null && !e.shadowBlockedBy().isEmpty()) {
      f.put("shadowBlockedBy", String.join(",", e.shadowBlockedBy()));
    }
    if (e.counts() != null && !e.counts().isEmpty()) {
      ObjectNode counts = JSON.createObjectNode();
      e.counts().forEach((rule, c) -> counts.putObject(rule).put("used", c[0]).put("limit", c[1]));
      f.put("counts", JSON.writeValueAsString(counts));
    }
    f.put("policyVersion", Long.toString(e.policyVersion()));
    if (e.degraded()) {
      f.put("degraded", "true");
    }
    if (e.deferred()) { // booked for sendAt: it counts there, and is sent then unless released
      f.put("deferred", "true");
      f.put("sendAt", Long.toString(e.sendAt()));
    }
    put(f, "who", e.who());
    put(f, "detail", e.detail());
    if (e.changes() != null) {
      f.put("changes", JSON.writeValueAsString(e.changes()));
    }
    return f;
  }

  private static void put(Map<String, String> f, String name, String value) {
    if (value != null) {
      f.put(name, value);
    }
  }

  @Override
  public void close() {
    link.close();
  }
}
