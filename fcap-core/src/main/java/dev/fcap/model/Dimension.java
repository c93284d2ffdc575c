package dev.fcap.model;

import java.util.Objects;
import java.util.Optional;

/**
 * A property of a message that can name a counter ({@code key}) or select messages ({@code match},
 * {@code exempt}): {@code recipient}, {@code content}, {@code channel}, {@code sender},
 * {@code category} or a custom attribute {@code attr:NAME}.
 */
public record Dimension(Kind kind, String attribute) {

  public enum Kind {
    RECIPIENT("recipient"),
    CONTENT("content"),
    CHANNEL("channel"),
    SENDER("sender"),
    CATEGORY("category"),
    ATTRIBUTE("attr");

    private final String id;

    Kind(String id) {
      this.id = id;
    }

    public String id() {
      return id;
    }
  }

  public static final Dimension RECIPIENT = new Dimension(Kind.RECIPIENT, null);
  public static final Dimension CONTENT = new Dimension(Kind.CONTENT, null);
  public static final Dimension CHANNEL = new Dimension(Kind.CHANNEL, null);
  public static final Dimension SENDER = new Dimension(Kind.SENDER, null);
  public static final Dimension CATEGORY = new Dimension(Kind.CATEGORY, null);

  public Dimension {
    Objects.requireNonNull(kind, "kind");
    if ((kind == Kind.ATTRIBUTE) != (attribute != null)) {
      throw new IllegalArgumentException("only attr dimensions carry an attribute name");
    }
    if (attribute != null && attribute.isEmpty()) {
      throw new IllegalArgumentException("attribute name must not be empty");
    }
  }

  public static Dimension attribute(String name) {
    return new Dimension(Kind.ATTRIBUTE, name);
  }

  /** Parses {@code recipient}, {@code content}, {@code channel}, {@code sender}, {@code category}, {@code attr:NAME}. */
  public static Optional<Dimension> parse(String text) {
    if (text == null) {
      return Optional.empty();
    }
    if (text.startsWith("attr:") && text.length() > 5) {
      return Optional.of(attribute(text.substring(5)));
    }
    for (Kind kind : Kind.values()) {
      if (kind != Kind.ATTRIBUTE && kind.id.equals(text)) {
        return Optional.of(new Dimension(kind, null));
      }
    }
    return Optional.empty();
  }

  /** Whether messages can be selected by this dimension in {@code match} and {@code exempt}. */
  public boolean selectable() {
    return kind != Kind.RECIPIENT && kind != Kind.CONTENT;
  }

  /** The value of this dimension in a message, or {@code null} when the message has none. */
  public String valueOf(Message message) {
    return switch (kind) {
      case RECIPIENT -> message.recipient();
      case CONTENT -> null; // content is fingerprinted, never read as a value
      case CHANNEL -> message.channel();
      case SENDER -> message.sender();
      case CATEGORY -> message.category();
      case ATTRIBUTE -> message.attributes().get(attribute);
    };
  }

  @Override
  public String toString() {
    return kind == Kind.ATTRIBUTE ? "attr:" + attribute : kind.id;
  }
}
