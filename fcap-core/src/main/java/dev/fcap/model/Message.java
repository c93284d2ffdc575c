package dev.fcap.model;

import java.time.ZoneId;
import java.util.Map;
import java.util.Objects;

/**
 * What a sender asks about: may {@link #recipient()} receive this message now? Only
 * {@link #recipient()} is required. {@link #content()} is never stored: the engine reduces it to a
 * 128-bit fingerprint. {@link #contentKey()} is an alternative, caller-chosen content identity (a
 * template id plus its variables); a message carries at most one of the two. {@link #messageId()}
 * is the caller's id of this message: the same (tenant, messageId) within the policy's longest window
 * (at most 7 days) is answered with the first admitted decision and counted once.
 * {@link #timeZone()} is the recipient's time zone, which send windows and calendar rules that follow
 * the recipient read; without it they read the policy's default zone, else UTC. {@link #priority()}
 * (default {@link Priority#NORMAL}) chooses how much of a rule's limit the message may use
 * ({@link Headroom}). {@link #override()} makes every enforced rule count the message without refusing
 * it (a message that must go and must still use up the recipient's caps); it needs the caller's
 * authority, which the server checks. {@link #defer()} (null: none) asks that the message be booked for
 * the earliest instant every rule admits it if it may not go now ({@link Defer}).
 */
public record Message(
    String tenant,
    String recipient,
    String channel,
    String sender,
    String category,
    String content,
    String contentKey,
    Map<String, String> attributes,
    long cost,
    String messageId,
    ZoneId timeZone,
    Priority priority,
    boolean override,
    Defer defer) {

  public static final String DEFAULT_TENANT = "default";
  public static final int MAX_ID_LENGTH = 1024;
  public static final int MAX_TENANT_LENGTH = 128;
  public static final long MAX_COST = 1_000_000_000L;

  public Message {
    tenant = tenant == null ? DEFAULT_TENANT : tenant;
    attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
    priority = priority == null ? Priority.NORMAL : priority;
    requireId("tenant", tenant, MAX_TENANT_LENGTH);
    if (recipient == null || recipient.isEmpty()) {
      throw new InvalidMessageException("recipient", "recipient is required and must not be empty");
    }
    requireId("recipient", recipient, MAX_ID_LENGTH);
    optionalId("channel", channel);
    optionalId("sender", sender);
    optionalId("category", category);
    if (content != null && contentKey != null) {
      throw new InvalidMessageException("contentKey", "give either content or contentKey, not both");
    }
    optionalId("contentKey", contentKey);
    attributes.forEach((k, v) -> {
      requireId("attributes", k, MAX_ID_LENGTH);
      requireId("attributes." + k, v, MAX_ID_LENGTH);
    });
    if (cost < 1 || cost > MAX_COST) {
      throw new InvalidMessageException("cost", "cost must be between 1 and " + MAX_COST + ", got " + cost);
    }
    optionalId("messageId", messageId);
  }

  public Message(String tenant, String recipient, String channel, String sender, String category, String content,
      String contentKey, Map<String, String> attributes, long cost, String messageId, ZoneId timeZone,
      Priority priority, boolean override) {
    this(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost, messageId, timeZone,
        priority, override, null);
  }

  public Message(String tenant, String recipient, String channel, String sender, String category, String content,
      String contentKey, Map<String, String> attributes, long cost, String messageId, ZoneId timeZone,
      Priority priority) {
    this(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost, messageId, timeZone,
        priority, false);
  }

  public Message(String tenant, String recipient, String channel, String sender, String category, String content,
      String contentKey, Map<String, String> attributes, long cost, String messageId, ZoneId timeZone) {
    this(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost, messageId, timeZone,
        null, false);
  }

  public Message(String tenant, String recipient, String channel, String sender, String category, String content,
      String contentKey, Map<String, String> attributes, long cost, String messageId) {
    this(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost, messageId, null, null,
        false);
  }

  public Message(String tenant, String recipient, String channel, String sender, String category, String content,
      String contentKey, Map<String, String> attributes, long cost) {
    this(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost, null, null, null, false);
  }

  private static void optionalId(String field, String value) {
    if (value != null) {
      requireId(field, value, MAX_ID_LENGTH);
    }
  }

  private static void requireId(String field, String value, int maxLength) {
    if (value == null || value.isEmpty()) {
      throw new InvalidMessageException(field, field + " must not be empty");
    }
    if (value.length() > maxLength) {
      throw new InvalidMessageException(field, field + " is longer than " + maxLength + " characters");
    }
  }

  public static Builder builder(String recipient) {
    return new Builder().recipient(recipient);
  }

  /** The same message with another cost. */
  public Message withCost(long newCost) {
    return new Message(tenant, recipient, channel, sender, category, content, contentKey, attributes, newCost,
        messageId, timeZone, priority, override, defer);
  }

  /** The same message, deferred as {@code newDefer} says (null: not deferred). */
  public Message withDefer(Defer newDefer) {
    return new Message(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost,
        messageId, timeZone, priority, override, newDefer);
  }

  /** Builds a {@link Message}; every field but the recipient is optional. */
  public static final class Builder {
    private String tenant;
    private String recipient;
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

    private Builder() {}

    /** Books the message for later if it may not go now ({@link Defer}); optional, none by default. */
    public Builder defer(Defer defer) {
      this.defer = defer;
      return this;
    }

    /** Counted by every enforced rule without being refused by any; the server asks for the authority. */
    public Builder override(boolean override) {
      this.override = override;
      return this;
    }

    /** How much of a rule's limit the message may use; optional, {@link Priority#NORMAL} by default. */
    public Builder priority(Priority priority) {
      this.priority = priority;
      return this;
    }

    /** The recipient's time zone; optional. */
    public Builder timeZone(ZoneId timeZone) {
      this.timeZone = timeZone;
      return this;
    }

    /** The caller's id of this message, for idempotent decisions; optional. */
    public Builder messageId(String messageId) {
      this.messageId = messageId;
      return this;
    }

    public Builder tenant(String tenant) {
      this.tenant = tenant;
      return this;
    }

    public Builder recipient(String recipient) {
      this.recipient = recipient;
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

    public Builder content(String content) {
      this.content = content;
      return this;
    }

    public Builder contentKey(String contentKey) {
      this.contentKey = contentKey;
      return this;
    }

    public Builder attributes(Map<String, String> attributes) {
      this.attributes = Objects.requireNonNull(attributes, "attributes");
      return this;
    }

    public Builder attribute(String name, String value) {
      java.util.HashMap<String, String> copy = new java.util.HashMap<>(attributes);
      copy.put(name, value);
      this.attributes = copy;
      return this;
    }

    public Builder cost(long cost) {
      this.cost = cost;
      return this;
    }

    public Message build() {
      return new Message(tenant, recipient, channel, sender, category, content, contentKey, attributes, cost,
          messageId, timeZone, priority, override, defer);
    }
  }
}
