package dev.fcap.server.audit;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;

/**
 * Audit events as JSON lines in files rotated by size: when a file would pass {@code maxFileBytes} it
 * becomes {@code FILE.1} (older ones shift to {@code .2} ... up to {@code maxFiles}, the oldest is
 * deleted) and a new file starts. Every line is one whole event.
 *
 * <p>Decisions and administration go to two files: decisions to {@code FILE}, every other event (rule
 * changes, resets) to {@link #adminFileOf FILE's admin sibling}, each rotated on its own, so
 * that decision traffic (every denial, at 100,000 decisions/s hundreds of megabytes a minute) never
 * rotates a rule change out.
 */
public final class FileAuditSink implements AuditSink {
  /** A factory with a codec: rule changes are written as JSON trees. */
  private static final JsonFactory JSON = new com.fasterxml.jackson.databind.MappingJsonFactory();
  private final RotatingFile decisions;
  private final RotatingFile admin;

  public FileAuditSink(Path file, long maxFileBytes, int maxFiles) throws IOException {
    this.decisions = new RotatingFile(file.toAbsolutePath(), maxFileBytes, maxFiles);
    this.admin = new RotatingFile(adminFileOf(file.toAbsolutePath()), maxFileBytes, maxFiles);
  }

  /** Where the events other than decisions go: {@code audit.jsonl} -> {@code audit.admin.jsonl}. */
  public static Path adminFileOf(Path file) {
    String name = file.getFileName().toString();
    int dot = name.lastIndexOf('.');
    return file.resolveSibling(dot > 0 ? name.substring(0, dot) + ".admin" + name.substring(dot) : name + ".admin");
  }

  @Override
  public void write(List<AuditEvent> events) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(512);
    for (AuditEvent e : events) {
      line.reset();
      encode(e, line);
      line.write('\n');
      (e.isDecision() ? decisions : admin).append(line);
    }
    decisions.flush();
    admin.flush();
  }

  /** One file and its rotated predecessors. */
  private static final class RotatingFile {
    private final Path file;
    private final long maxFileBytes;
    private final int maxFiles;
    private OutputStream out;
    private long size;

    RotatingFile(Path file, long maxFileBytes, int maxFiles) throws IOException {
      this.file = file;
      this.maxFileBytes = maxFileBytes;
      this.maxFiles = maxFiles;
      if (file.getParent() != null) {
        Files.createDirectories(file.getParent());
      }
      open();
    }

    private void open() throws IOException {
      out = new BufferedOutputStream(Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND),
          1 << 16);
      size = Files.size(file);
    }

    void append(ByteArrayOutputStream line) throws IOException {
      if (size > 0 && size + line.size() > maxFileBytes) {
        rotate();
      }
      line.writeTo(out);
      size += line.size();
    }

    void flush() throws IOException {
      out.flush();
    }

    void close() throws IOException {
      out.close();
    }

    private void rotate() throws IOException {
      out.close();
      Files.deleteIfExists(numbered(maxFiles));
      for (int i = maxFiles - 1; i >= 1; i--) {
        if (Files.exists(numbered(i))) {
          Files.move(numbered(i), numbered(i + 1), StandardCopyOption.REPLACE_EXISTING);
        }
      }
      if (maxFiles >= 1) {
        Files.move(file, numbered(1), StandardCopyOption.REPLACE_EXISTING);
      } else {
        Files.delete(file);
      }
      open();
    }

    private Path numbered(int i) {
      return file.resolveSibling(file.getFileName() + "." + i);
    }
  }

  static void encode(AuditEvent e, OutputStream out) throws IOException {
    try (JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
      g.writeStartObject();
      g.writeStringField("type", e.type());
      g.writeNumberField("time", e.time());
      optional(g, "decisionId", e.decisionId());
      g.writeStringField("tenant", e.tenant());
      optional(g, "recipient", e.recipient());
      optional(g, "channel", e.channel());
      optional(g, "category", e.category());
      list(g, "blockedBy", e.blockedBy());
      list(g, "shadowBlockedBy", e.shadowBlockedBy());
      if (e.counts() != null && !e.counts().isEmpty()) {
        g.writeObjectFieldStart("counts");
        for (Map.Entry<String, long[]> c : e.counts().entrySet()) {
          g.writeObjectFieldStart(c.getKey());
          g.writeNumberField("used", c.getValue()[0]);
          g.writeNumberField("limit", c.getValue()[1]);
          g.writeEndObject();
        }
        g.writeEndObject();
      }
      g.writeNumberField("policyVersion", e.policyVersion());
      if (e.degraded()) {
        g.writeBooleanField("degraded", true);
      }
      if (e.deferred()) { // booked for sendAt: the message counts there and is sent then, unless released
        g.writeBooleanField("deferred", true);
        g.writeNumberField("sendAt", e.sendAt());
      }
      optional(g, "who", e.who());
      optional(g, "detail", e.detail());
      if (e.changes() != null) {
        g.writeArrayFieldStart("changes");
        for (RuleDiff d : e.changes()) {
          g.writeStartObject();
          g.writeStringField("rule", d.rule());
          g.writeFieldName("before");
          g.writeTree(d.before());
          g.writeFieldName("after");
          g.writeTree(d.after());
          g.writeEndObject();
        }
        g.writeEndArray();
      }
      g.writeEndObject();
    }
  }

  private static void optional(JsonGenerator g, String name, String value) throws IOException {
    if (value != null) {
      g.writeStringField(name, value);
    }
  }

  private static void list(JsonGenerator g, String name, List<String> values) throws IOException {
    if (values != null && !values.isEmpty()) {
      g.writeArrayFieldStart(name);
      for (String v : values) {
        g.writeString(v);
      }
      g.writeEndArray();
    }
  }

  @Override
  public void close() throws IOException {
    try {
      decisions.close();
    } finally {
      admin.close();
    }
  }
}
