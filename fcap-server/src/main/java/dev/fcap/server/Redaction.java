package dev.fcap.server;

import java.util.regex.Pattern;

/** Keeps secrets out of logs and error messages: the password of a URI's user info. */
public final class Redaction {
  private static final Pattern PASSWORD = Pattern.compile("(?<=://)([^/@:]*):[^/@]*@");

  private Redaction() {}

  /** {@code redis://user:secret@host:6379} becomes {@code redis://user:***@host:6379}; other text is unchanged. */
  public static String uri(String uri) {
    return uri == null ? null : PASSWORD.matcher(uri).replaceAll("$1:***@");
  }
}
