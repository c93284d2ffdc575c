package dev.fcap.server;

import java.util.Collection;
import java.util.Locale;

/**
 * The known name closest to a mistyped one, by edit distance with case and {@code _ . -} ignored
 * ({@code FCAP_STORE_MAXBYTES} is {@code FCAP_STORE_MAX_BYTES} at distance 0). A dozen lines: a text
 * library would add two jars to {@code fcap.jar} for this one function.
 */
final class Closest {
  private Closest() {}

  /** The closest of {@code known} to {@code name}, or null when none is within a third of its length. */
  static String of(String name, Collection<String> known) {
    String bare = bare(name);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String k : known) {
      int d = distance(bare, bare(k));
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    return bestDistance <= Math.max(2, bare.length() / 3) ? best : null;
  }

  private static String bare(String s) {
    return s.toLowerCase(Locale.ROOT).replaceAll("[_.\\-]", "");
  }

  /** Levenshtein distance: insertions, deletions and substitutions, one row at a time. */
  static int distance(String a, String b) {
    int[] row = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      row[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      int diagonal = row[0];
      row[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int above = row[j];
        row[j] = Math.min(Math.min(row[j] + 1, row[j - 1] + 1), diagonal + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
        diagonal = above;
      }
    }
    return row[b.length()];
  }
}
