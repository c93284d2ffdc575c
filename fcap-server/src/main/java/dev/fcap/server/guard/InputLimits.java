package dev.fcap.server.guard;

/**
 * The shape a request may have, inside {@code limits.maxBodyBytes}: a body within the byte limit can
 * still hold 200,000 attributes or a JSON nesting thousands deep, and each costs CPU long before the
 * engine refuses it. Each limit is a setting ({@code limits.*}, docs/security.md); each refusal is a
 * 400 naming the field, before anything is parsed into a message.
 *
 * @param maxAttributes attributes per message ({@code limits.maxAttributes})
 * @param maxAttributeNameLength characters of an attribute name ({@code limits.maxAttributeNameLength})
 * @param maxValueLength characters of an id or attribute value: recipient, channel, sender, category,
 *     contentKey ({@code limits.maxValueLength}; at most {@code Message.MAX_ID_LENGTH})
 * @param maxJsonDepth nesting of objects and arrays in a JSON body ({@code limits.maxJsonDepth})
 * @param maxRulesPerPolicy rules in one tenant's policy ({@code limits.maxRulesPerPolicy})
 */
public record InputLimits(int maxAttributes, int maxAttributeNameLength, int maxValueLength, int maxJsonDepth,
    int maxRulesPerPolicy) {
  public static final int DEFAULT_MAX_ATTRIBUTES = 64;
  public static final int DEFAULT_MAX_ATTRIBUTE_NAME_LENGTH = 128;
  public static final int DEFAULT_MAX_VALUE_LENGTH = 1024;
  public static final int DEFAULT_MAX_JSON_DEPTH = 16;
  public static final int DEFAULT_MAX_RULES_PER_POLICY = 1000;

  public static InputLimits defaults() {
    return new InputLimits(DEFAULT_MAX_ATTRIBUTES, DEFAULT_MAX_ATTRIBUTE_NAME_LENGTH, DEFAULT_MAX_VALUE_LENGTH,
        DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_RULES_PER_POLICY);
  }
}
