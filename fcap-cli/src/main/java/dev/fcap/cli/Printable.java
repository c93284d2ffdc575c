package dev.fcap.cli;

/**
 * Input echoed in a message, made safe to print: a control character (ESC, BEL, a line break...),
 * a format character or an unassigned one is written as {@code \}{@code uXXXX}, so a bad file
 * cannot move the cursor, ring the bell or forge a line of its own on the user's terminal.
 */
final class Printable {
  private Printable() {}

  static String escape(String s) {
    if (s == null || s.codePoints().noneMatch(Printable::unsafe)) {
      return s;
    }
    StringBuilder b = new StringBuilder(s.length() + 16);
    s.codePoints().forEach(c -> {
      if (unsafe(c)) {
        if (Character.isBmpCodePoint(c)) {
          b.append(String.format("\\u%04X", c));
        } else {
          b.append(String.format("\\u%04X\\u%04X", (int) Character.highSurrogate(c), (int) Character.lowSurrogate(c)));
        }
      } else {
        b.appendCodePoint(c);
      }
    });
    return b.toString();
  }

  private static boolean unsafe(int c) {
    int type = Character.getType(c);
    return type == Character.CONTROL || type == Character.FORMAT || type == Character.UNASSIGNED
        || type == Character.SURROGATE || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR;
  }
}
