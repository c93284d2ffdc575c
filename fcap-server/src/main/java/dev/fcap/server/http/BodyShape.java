package dev.fcap.server.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.guard.InputLimits;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;

/**
 * Checks the shape of a JSON body against {@link InputLimits} with one pass of the streaming parser,
 * before any tree, map or message is built: nesting depth, attributes per message, attribute name and
 * id lengths. A body of 200,000 attributes is refused after reading its first 65 names, for the price
 * of a token scan. Malformed JSON passes: the strict parser behind it reports where it breaks.
 */
final class BodyShape {
  /** Fields whose string value is an id, limited to {@link InputLimits#maxValueLength()}. */
  private static final Set<String> IDS = Set.of("recipient", "channel", "sender", "category", "contentKey");

  private BodyShape() {}

  /** One open object or array: where it is, and how many members it has so far. */
  private static final class Frame {
    final Frame parent;
    final boolean object;
    final String name;
    final boolean attributes;
    int members;

    Frame(Frame parent, boolean object, String name) {
      this.parent = parent;
      this.object = object;
      this.name = name;
      this.attributes = object && "attributes".equals(name) && parent != null && parent.object;
    }

    String path() {
      if (parent == null) {
        return name;
      }
      String up = parent.path();
      if (name.startsWith("[")) {
        return (up == null ? "" : up) + name;
      }
      return up == null ? name : up + "." + name;
    }

    String child(String field) {
      String p = path();
      return p == null ? field : p + "." + field;
    }
  }

  /** Throws a 400 naming the field when {@code body} exceeds a limit. */
  static void check(byte[] body, InputLimits limits) {
    Deque<Frame> open = new ArrayDeque<>();
    try (JsonParser p = Json.MAPPER.getFactory().createParser(body)) {
      Frame top = null;
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        switch (t) {
          case START_OBJECT, START_ARRAY -> {
            String name = top == null ? null : top.object ? p.currentName() : "[" + top.members++ + "]";
            Frame f = new Frame(top, t == JsonToken.START_OBJECT, name);
            if (open.size() + 1 > limits.maxJsonDepth()) {
              throw new ApiException(400, "too_deep", "the body nests deeper than " + limits.maxJsonDepth()
                  + " levels (limits.maxJsonDepth)", f.path());
            }
            open.push(f);
            top = f;
          }
          case END_OBJECT, END_ARRAY -> {
            open.pop();
            top = open.peek();
          }
          case FIELD_NAME -> {
            top.members++;
            if (top.attributes) {
              String name = p.currentName();
              if (top.members > limits.maxAttributes()) {
                throw new ApiException(400, "too_many_attributes", "a message carries at most "
                    + limits.maxAttributes() + " attributes (limits.maxAttributes)", top.path());
              }
              if (name.length() > limits.maxAttributeNameLength()) {
                throw new ApiException(400, "too_long", "attribute names are at most "
                    + limits.maxAttributeNameLength() + " characters (limits.maxAttributeNameLength)", top.path());
              }
            }
          }
          case VALUE_STRING -> {
            if (top != null && !top.object) {
              top.members++;
            } else if (top != null && (top.attributes || IDS.contains(p.currentName()))
                && p.getTextLength() > limits.maxValueLength()) {
              throw new ApiException(400, "too_long", p.currentName() + " is longer than "
                  + limits.maxValueLength() + " characters (limits.maxValueLength)", top.child(p.currentName()));
            }
          }
          default -> {
            if (top != null && !top.object) {
              top.members++;
            }
          }
        }
      }
    } catch (JsonProcessingException e) {
      // malformed: Json.parse says where, with the same parser settings
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
