package dev.fcap.policy;

import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Windows as written in rule files: one or more {@code <number><unit>} with units ms, s, m, h, d. */
public final class Durations {
  private static final Pattern PART = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");

  private Durations() {}

  /** Parses {@code 59s}, {@code 1m}, {@code 24h}, {@code 1h30m}, {@code 500ms}, {@code 7d}. */
  public static Optional<Duration> parse(String text) {
    if (text == null || text.isEmpty()) {
      return Optional.empty();
    }
    Matcher m = PART.matcher(text);
    Duration total = Duration.ZERO;
    int at = 0;
    while (at < text.length()) {
      if (!m.find(at) || m.start() != at) {
        return Optional.empty();
      }
      long n = Long.parseLong(m.group(1));
      total = total.plus(switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      });
      at = m.end();
    }
    return Optional.of(total);
  }

  /** The shortest form in the largest whole unit: {@code 1m}, {@code 24h}, {@code 59s}, {@code 1500ms}. */
  public static String format(Duration d) {
    long ms = d.toMillis();
    long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1000L};
    String[] units = {"d", "h", "m", "s"};
    for (int i = 0; i < sizes.length; i++) {
      if (ms != 0 && ms % sizes[i] == 0) {
        long n = ms / sizes[i];
        // prefer 24h over 1d for the common day window, as operators write it
        return i == 0 && n == 1 ? "24h" : n + units[i];
      }
    }
    return ms + "ms";
  }
}
