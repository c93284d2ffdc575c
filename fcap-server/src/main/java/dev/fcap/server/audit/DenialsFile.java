package dev.fcap.server.audit;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fcap.server.audit.RecentDenials.Denial;
import dev.fcap.server.audit.RecentDenials.Held;
import dev.fcap.server.files.AtomicFile;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file {@link RecentDenials} are saved in: JSON, {@code {"version": 1, "recipients": [{"tenant",
 * "recipient", "denials": [{"decisionId", "time", "blockedBy", "channel", "category"}]}]}}, the least
 * recently denied recipient first and each recipient's denials oldest first, so that reading it back
 * through {@link RecentDenials#add} restores the order in which the bounds forget. Streamed both ways:
 * a full file (every recipient at its bound) is never held whole as text or as a tree.
 */
final class DenialsFile {
  private static final Logger LOG = LoggerFactory.getLogger(DenialsFile.class);
  private static final int VERSION = 1;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonFactory FACTORY = JSON.getFactory().copy()
      .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
  private final Path path;

  DenialsFile(Path path) {
    this.path = path.toAbsolutePath();
  }

  boolean exists() {
    return Files.exists(path);
  }

  void write(List<Held> all) throws IOException {
    Files.createDirectories(path.getParent());
    AtomicFile.write(path, out -> {
      try (JsonGenerator g = FACTORY.createGenerator(out)) {
        g.writeStartObject();
        g.writeNumberField("version", VERSION);
        g.writeArrayFieldStart("recipients");
        for (Held h : all) {
          write(g, h);
        }
        g.writeEndArray();
        g.writeEndObject();
      }
    });
  }

  private static void write(JsonGenerator g, Held h) throws IOException {
    g.writeStartObject();
    g.writeStringField("tenant", h.tenant());
    g.writeStringField("recipient", h.recipient());
    g.writeArrayFieldStart("denials");
    for (Denial d : h.denials()) {
      g.writeStartObject();
      g.writeStringField("decisionId", d.decisionId());
      g.writeNumberField("time", d.time());
      g.writeArrayFieldStart("blockedBy");
      for (String rule : d.blockedBy()) {
        g.writeString(rule);
      }
      g.writeEndArray();
      g.writeStringField("channel", d.channel());
      g.writeStringField("category", d.category());
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  /**
   * Hands each recipient in the file to {@code each}; false (after some calls, perhaps) when the file
   * cannot be read whole: it is then logged and set aside, and what was handed over must be dropped.
   */
  boolean read(Consumer<Held> each) {
    int recipients = 0;
    try (InputStream in = Files.newInputStream(path); JsonParser p = FACTORY.createParser(in)) {
      p.setCodec(JSON);
      expect(p.nextToken() == JsonToken.START_OBJECT, "expected a JSON object");
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        p.nextToken();
        if (field.equals("version")) {
          expect(p.currentToken() == JsonToken.VALUE_NUMBER_INT && p.getIntValue() == VERSION,
              "version " + p.getText() + " is not " + VERSION);
        } else if (field.equals("recipients")) {
          expect(p.currentToken() == JsonToken.START_ARRAY, "recipients: expected an array");
          while (p.nextToken() == JsonToken.START_OBJECT) {
            each.accept(held(p.readValueAsTree(), recipients++));
          }
          expect(p.currentToken() == JsonToken.END_ARRAY, "recipient " + recipients + ": expected an object");
        } else {
          p.skipChildren();
        }
      }
      expect(p.currentToken() == JsonToken.END_OBJECT && p.nextToken() == null, "expected the end of the file");
    } catch (NoSuchFileException e) {
      return true;
    } catch (IOException | RuntimeException e) {
      setAside(e);
      return false;
    }
    if (recipients > 0) {
      LOG.info("recent denials read from {} ({} recipients)", path, recipients);
    }
    return true;
  }

  private static Held held(JsonNode n, int index) throws IOException {
    String where = "recipient " + index + ": ";
    expect(n.path("tenant").isTextual() && n.path("recipient").isTextual(), where + "expected tenant and recipient");
    expect(n.path("denials").isArray(), where + "denials: expected an array");
    List<Denial> denials = new ArrayList<>(n.get("denials").size());
    for (JsonNode d : n.get("denials")) {
      expect(d.path("decisionId").isTextual() && d.path("time").isIntegralNumber() && d.path("blockedBy").isArray() && nullOrText(d.path("channel"))
          && nullOrText(d.path("category")), where + "a denial needs decisionId, time, blockedBy, channel, category");
      List<String> blockedBy = new ArrayList<>(d.get("blockedBy").size());
      for (JsonNode rule : d.get("blockedBy")) {
        expect(rule.isTextual(), where + "blockedBy: expected rule ids");
        blockedBy.add(rule.asText());
      }
      denials.add(new Denial(d.get("decisionId").asText(), d.get("time").asLong(), List.copyOf(blockedBy),
          d.path("channel").textValue(), d.path("category").textValue()));
    }
    return new Held(n.get("tenant").asText(), n.get("recipient").asText(), denials);
  }

  private static boolean nullOrText(JsonNode n) {
    return n.isMissingNode() || n.isNull() || n.isTextual();
  }

  private static void expect(boolean ok, String problem) throws IOException {
    if (!ok) {
      throw new IOException(problem);
    }
  }

  /** A file that cannot be read never stops a start: it is moved out of the way, kept for a look. */
  private void setAside(Exception cause) {
    Path aside = path.resolveSibling(path.getFileName() + ".corrupt");
    try {
      Files.move(path, aside, StandardCopyOption.REPLACE_EXISTING);
      LOG.warn("cannot read the recent denials in {} ({}); moved it to {}, recent denials start empty", path,
          cause.toString(), aside);
    } catch (IOException e) {
      LOG.warn("cannot read the recent denials in {} ({}), nor move it to {} ({}); recent denials start empty and "
          + "the next save replaces it", path, cause.toString(), aside, e.toString());
    }
  }

  /**
   * After a rewrite that should have erased a recipient failed: deletes the file, so the erasure holds
   * at the cost of everyone's saved denials.
   *
   * @throws UncheckedIOException the file could not be deleted either
   */
  void deleteInstead(IOException writeFailure) {
    try {
      Files.deleteIfExists(path);
      LOG.error("cannot rewrite {} to erase a recipient's recent denials ({}); deleted it instead: the recent "
          + "denials saved there are lost", path, writeFailure.toString());
    } catch (IOException e) {
      LOG.error("cannot erase a recipient's recent denials from {}: rewriting failed ({}) and deleting failed ({})",
          path, writeFailure.toString(), e.toString());
      e.addSuppressed(writeFailure);
      throw new UncheckedIOException("cannot erase a recipient's recent denials from " + path
          + ": rewriting failed (" + writeFailure.getMessage() + ") and deleting failed (" + e.getMessage() + ")", e);
    }
  }
}
