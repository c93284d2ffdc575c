package dev.fcap.client;

import java.time.ZoneId;
import java.util.Map;
import java.util.Objects;

/**
 * A message to ask about: the recipient, and whatever the rules key or match on. Immutable; build it
 * with {@link #builder(String)} or {@link #of(String)}.
 *
 * <p>{@link #messageId()} is the caller's id of this message: the server returns the first decision
 * for the same (tenant, messageId) and records nothing again, which is what makes a retry safe. When
 * a message has none, the client gives it one for the call ({@link ClientOptions#generateMessageIds()}),
 * reused by every retry of that call, and reports it on the {@link Decision}.
 */
public final class Message {
  private final String tenant;
  private final String recipient;
  private final String channel;
  private final String sender;
  private final String category;
  private final String content;
  private final String contentKey;
  private final Map<String, String> attributes;
  private final long cost;
  private final String messageId;
  private final ZoneId timeZone;
  private final Priority priority;
  private final boolean override;
  private final Defer defer;

  private Message(Builder b) {
    this.tenant = b.tenant;
    this.recipient = Objects.requireNonNull(b.recipient, "recipient");
    this.channel = b.channel;
    this.sender = b.sender;
    this.category = b.category;
    this.content = b.content;
    this.contentKey = b.contentKey;
    this.attributes = Map.copyOf(b.attributes);
    this.cost = b.cost;
    this.messageId = b.messageId;
    this.timeZone = b.timeZone;
    this.priority = b.priority;
    this.override = b.override;
    this.defer = b.defer;
  }

  /** A message to {@code recipient} with nothing else set. */
  public static Message of(String recipient) {
    return builder(recipient).build();
  }

  public static Builder builder(String recipient) {
    return new Builder(recipient);
  }

  /** A builder holding this message's fields. */
  public Builder toBuilder() {
    Builder b = new Builder(recipient).tenant(tenant).channel(channel).sender(sender).category(category)
        .content(content).contentKey(contentKey).attributes(attributes).messageId(messageId)
        .timeZone(timeZone).priority(priority).override(override).defer(defer);
    b.cost = cost;
    return b;
  }

  /** This message with another id. */
  public Message withMessageId(String id) {
    return toBuilder().messageId(id).build();
  }

  /** Null: the server's default tenant. */
  public String tenant() {
    return tenant;
  }

  public String recipient() {
    return recipient;
  }

  public String channel() {
    return channel;
  }

  public String sender() {
    return sender;
  }

  public String category() {
    return category;
  }

  public String content() {
    return content;
  }

  public String contentKey() {
    return contentKey;
  }

  public Map<String, String> attributes() {
    return attributes;
  }

  public long cost() {
    return cost;
  }

  /** Null when the caller gave none. */
  public String messageId() {
    return messageId;
  }

  /** The recipient's time zone; null: the policy's zone, else UTC. */
  public ZoneId timeZone() {
    return timeZone;
  }

  /** Whether every rule counts this message and none refuses it (the key needs the override role). */
  public boolean override() {
    return override;
  }

  /** Null when the caller gave none: {@link Priority#NORMAL}. */
  public Priority priority() {
    return priority;
  }

  /** Whether and until when to book the message if it may not go now; null: not deferred. */
  public Defer defer() {
    return defer;
  }

  /** This message, deferred as {@code newDefer} says (null: not deferred). */
  public Message withDefer(Defer newDefer) {
    return toBuilder().defer(newDefer).build();
  }

  @Override
  public String toString() {
    return "Message[tenant=" + tenant + ", recipient=" + recipient + ", channel=" + channel + ", category=" + category
        + ", cost=" + cost + ", messageId=" + messageId + ", timeZone=" + timeZone + ", priority=" + priority
        + ", defer=" + defer + "]";
  }

  /** Mutable, not thread-safe; {@link #build()} makes the immutable message. Nulls mean "not set". */
  public static final class Builder {
    private final String recipient;
    private String tenant;
    private String channel;
    private String sender;
    private String category;
    private String content;
    private String contentKey;
    private Map<String, String> attributes = Map.of();
    private long cost = 1;
    private String messageId;
    private ZoneId timeZone;
    private Priority priority;
    private boolean override;
    private Defer defer;

    private Builder(String recipient) {
      this.recipient = Objects.requireNonNull(recipient, "recipient");
    }

    public Builder tenant(String tenant) {
      this.tenant = tenant;
      return this;
    }

    public Builder channel(String channel) {
      this.channel = channel;
      return this;
    }

    public Builder sender(String sender) {
      this.sender = sender;
      return this;
    }

    public Builder category(String category) {
      this.category = category;
      return this;
    }

    /** The exact text; the server keeps only its fingerprint. Not with {@link #contentKey}. */
    public Builder content(String content) {
      this.content = content;
      return this;
    }

    /** A caller-chosen identity of the content, e.g. a template id and its variables. */
    public Builder contentKey(String contentKey) {
      this.contentKey = contentKey;
      return this;
    }

    public Builder attributes(Map<String, String> attributes) {
      this.attributes = Map.copyOf(attributes);
      return this;
    }

    public Builder attribute(String name, String value) {
      java.util.HashMap<String, String> copy = new java.util.HashMap<>(attributes);
      copy.put(name, value);
      this.attributes = Map.copyOf(copy);
      return this;
    }

    /** Positive; default 1. */
    public Builder cost(long cost) {
      if (cost < 1) {
        throw new IllegalArgumentException("cost must be positive, got " + cost);
      }
      this.cost = cost;
      return this;
    }

    public Builder messageId(String messageId) {
      this.messageId = messageId;
      return this;
    }

    /**
     * The recipient's time zone, e.g. {@code ZoneId.of("America/New_York")}: the clock of the send
     * windows and calendar caps that follow the recipient. The server takes IANA ids.
     */
    public Builder timeZone(ZoneId timeZone) {
      this.timeZone = timeZone;
      return this;
    }

    /** How much of a rule's limit the message may use (null: {@link Priority#NORMAL}). */
    public Builder priority(Priority priority) {
      this.priority = priority;
      return this;
    }

    /**
     * Counted by every rule and refused by none: a message that must go and must still use up the
     * recipient's caps. The server asks for the {@code override} role and audits who asked.
     */
    public Builder override(boolean override) {
      this.override = override;
      return this;
    }

    /**
     * Books the message for later if it may not go now ({@link Defer#BY_DEFAULT}, or
     * {@link Defer#until}); null, the default: refused as usual.
     */
    public Builder defer(Defer defer) {
      this.defer = defer;
      return this;
    }

    public Message build() {
      return new Message(this);
    }
  }
}
