package dev.fcap.uri;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps the secret of a store URI out of logs and error messages.
 *
 * <p>Operators write passwords raw, so a password may hold any of {@code / @ : ? # %}: a URI's
 * credentials are therefore everything between {@code ://} and the <em>last</em> {@code @} of the URI
 * (a host, port list, database, query or fragment holds no {@code @}). Without a {@code :} the whole
 * user info is the secret ({@code redis://secret@host} is Lettuce's password-only form); with one, what
 * follows the first {@code :} is. {@link #scrub} also removes the secret, raw and percent-decoded,
 * from any other text (a library's exception message may quote it), and so is each piece of it
 * between two delimiters. Tested by {@code RedactionTest}
 * with passwords holding each of those characters.
 */
public final class Redaction {
  /** A URI inside text: scheme, {@code ://}, then everything up to white space or a quote. */
  private static final Pattern URI = Pattern.compile("([a-zA-Z][a-zA-Z0-9+.-]*://)([^\\s'\"]*)");
  private static final String HIDDEN = "***";
  /**
   * A parser that misreads a raw password cuts it at a URI delimiter and may quote one piece (Lettuce
   * took {@code hunt/er2@h:1} as the port {@code "er2@h:1"}): each piece is hidden too. Pieces shorter
   * than {@link #MIN_PIECE} stay, or every {@code a} of a message would go.
   */
  private static final String DELIMITERS = "[/@:?#%]";
  private static final int MIN_PIECE = 3;

  private Redaction() {}

  /**
   * {@code redis://user:secret@host:6379} becomes {@code redis://user:***@host:6379}; every URI in the
   * text is redacted, other text is unchanged.
   */
  public static String uri(String text) {
    if (text == null) {
      return null;
    }
    Matcher m = URI.matcher(text);
    StringBuilder out = new StringBuilder(text.length());
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + redactRest(m.group(2))));
    }
    m.appendTail(out);
    return out.toString();
  }

  private static String redactRest(String rest) {
    int at = rest.lastIndexOf('@');
    if (at < 0) {
      return rest;
    }
    String info = rest.substring(0, at);
    int colon = info.indexOf(':');
    String user = colon < 0 ? "" : info.substring(0, colon + 1);
    return user + HIDDEN + rest.substring(at);
  }

  /** {@code text} with every URI redacted and the secret of {@code uri} removed wherever it appears. */
  public static String scrub(String text, String uri) {
    if (text == null) {
      return null;
    }
    String out = uri(text);
    String secret = secret(uri);
    if (secret != null && !secret.isEmpty()) {
      out = out.replace(secret, HIDDEN);
      String decoded = decode(secret);
      if (!decoded.isEmpty()) {
        out = out.replace(decoded, HIDDEN);
      }
      for (String piece : secret.split(DELIMITERS)) {
        if (piece.length() >= MIN_PIECE) {
          out = out.replace(piece, HIDDEN);
        }
      }
    }
    return out;
  }

  /** The secret part of a URI's user info (raw, as written), or null without one. */
  static String secret(String uri) {
    if (uri == null) {
      return null;
    }
    int scheme = uri.indexOf("://");
    if (scheme < 0) {
      return null;
    }
    String rest = uri.substring(scheme + 3);
    int at = rest.lastIndexOf('@');
    if (at < 0) {
      return null;
    }
    String info = rest.substring(0, at);
    int colon = info.indexOf(':');
    return colon < 0 ? info : info.substring(colon + 1);
  }

  private static String decode(String s) {
    try {
      return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s; // a raw '%' not followed by hex: the text holds it as written
    }
  }
}
