package dev.fcap.server.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.JsonParserDelegate;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.guard.InputLimits;
import java.io.IOException;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A parser that holds a JSON body to {@link InputLimits} while it is read: nesting depth, attributes
 * per message, attribute name and id lengths. The tree is built through it ({@link Json#parse}), so
 * a body is read once and checked as it goes: a body of 200,000 attributes is refused after its first
 * 65 names, before the rest is read or a node of it is kept.
 *
 * <p><b>Why a delegate.</b> Checking the shape in a pass of its own, then parsing the tree, would read
 * every body twice (two parsers, a frame per container): about 1 KB and a second pass per decision.
 * Every token the tree builder reads comes through {@link #nextToken}: Jackson's own {@code next*}
 * variants of {@link JsonParser} are written on it, and the two this delegate would pass straight on
 * ({@link #nextValue}, {@link #skipChildren}) are written on it here too, so no token goes unchecked.
 * Malformed JSON is the underlying parser's to report ({@link Json#parse} says where).
 */
final class BodyShape extends JsonParserDelegate {
  /** Fields whose string value is an id, limited to {@link InputLimits#maxValueLength()}. */
  private static final Set<String> IDS = Set.of("recipient", "channel", "sender", "category", "contentKey");

  private final InputLimits limits;
  /** Told the code of each refusal before it is thrown (the server counts them with its other refusals). */
  private final Consumer<String> refused;
  /** The innermost open object or array (null at the top level); its parents chain outwards. */
  private Frame top;

  BodyShape(JsonParser parser, InputLimits limits, Consumer<String> refused) {
    super(parser);
    this.limits = limits;
    this.refused = refused;
  }

  /** One open object or array: where it is, and how many members it has so far. */
  private static final class Frame {
    final Frame parent;
    final boolean object;
    final String name;
    final boolean attributes;
    /** 1 for the top level's object or array. */
    final int depth;
    int members;

    Frame(Frame parent, boolean object, String name) {
      this.parent = parent;
      this.object = object;
      this.name = name;
      this.depth = parent == null ? 1 : parent.depth + 1;
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

  @Override
  public JsonToken nextToken() throws IOException {
    JsonToken t = delegate.nextToken();
    if (t != null) {
      check(t);
    }
    return t;
  }

  @Override
  public JsonToken nextValue() throws IOException {
    JsonToken t = nextToken();
    return t == JsonToken.FIELD_NAME ? nextToken() : t;
  }

  @Override
  public JsonParser skipChildren() throws IOException {
    if (currentToken() == JsonToken.START_OBJECT || currentToken() == JsonToken.START_ARRAY) {
      for (int open = 1; open > 0; ) {
        JsonToken t = nextToken();
        if (t == null) {
          break;
        }
        open += t.isStructStart() ? 1 : t.isStructEnd() ? -1 : 0;
      }
    }
    return this;
  }

  /** Throws a 400 naming the field when {@code t} takes the body past a limit. */
  private void check(JsonToken t) throws IOException {
    switch (t) {
      case START_OBJECT, START_ARRAY -> {
        String name = top == null ? null : top.object ? delegate.currentName() : "[" + top.members++ + "]";
        top = new Frame(top, t == JsonToken.START_OBJECT, name);
        if (top.depth > limits.maxJsonDepth()) {
          throw refuse("too_deep", "the body nests deeper than " + limits.maxJsonDepth()
              + " levels (limits.maxJsonDepth)", top.path());
        }
      }
      case END_OBJECT, END_ARRAY -> top = top.parent;
      case FIELD_NAME -> {
        top.members++;
        if (top.attributes && top.members > limits.maxAttributes()) {
          throw refuse("too_many_attributes", "a message carries at most " + limits.maxAttributes()
              + " attributes (limits.maxAttributes)", top.path());
        }
        if (top.attributes && delegate.currentName().length() > limits.maxAttributeNameLength()) {
          throw refuse("too_long", "attribute names are at most " + limits.maxAttributeNameLength()
              + " characters (limits.maxAttributeNameLength)", top.path());
        }
      }
      case VALUE_STRING -> {
        if (top != null && !top.object) {
          top.members++;
        } else if (top != null && (top.attributes || IDS.contains(delegate.currentName()))
            && delegate.getTextLength() > limits.maxValueLength()) {
          String field = delegate.currentName();
          throw refuse("too_long", field + " is longer than " + limits.maxValueLength()
              + " characters (limits.maxValueLength)", top.child(field));
        }
      }
      default -> {
        if (top != null && !top.object) {
          top.members++;
        }
      }
    }
  }

  private ApiException refuse(String code, String message, String field) {
    refused.accept(code);
    return new ApiException(400, code, message, field);
  }
}
