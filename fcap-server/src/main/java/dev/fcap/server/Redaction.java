package dev.fcap.server;

/**
 * Keeps secrets out of logs and error messages: the password of a URI's user info. The rules live in
 * {@link dev.fcap.store.Redaction}, shared with the Redis store.
 */
public final class Redaction {

  private Redaction() {}

  /** {@code redis://user:secret@host:6379} becomes {@code redis://user:***@host:6379}; other text is unchanged. */
  public static String uri(String uri) {
    return dev.fcap.store.Redaction.uri(uri);
  }

  /** {@code text} with every URI redacted and the secret of {@code uri} removed wherever it appears. */
  public static String scrub(String text, String uri) {
    return dev.fcap.store.Redaction.scrub(text, uri);
  }
}
