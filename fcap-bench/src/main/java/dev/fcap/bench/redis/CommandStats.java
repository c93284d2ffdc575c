package dev.fcap.bench.redis;

/**
 * Reads {@code INFO commandstats}: the time Redis spent inside commands, which does not depend on
 * how fast the client sends them or how full its pipeline runs (scripts count the commands they
 * call too).
 */
public final class CommandStats {
  private CommandStats() {}

  /** Microseconds spent in {@code EVALSHA} and {@code EVAL}: the scripts' own time. */
  public static long scriptUsec(String commandstats) {
    return field(commandstats, "evalsha", "usec=") + field(commandstats, "eval", "usec=");
  }

  /** Calls of {@code command} (lower case, as Redis names it), 0 if none yet. */
  public static long calls(String commandstats, String command) {
    return field(commandstats, command, "calls=");
  }

  private static long field(String commandstats, String command, String name) {
    String head = "cmdstat_" + command + ":";
    for (String line : commandstats.split("\\r?\\n")) {
      if (line.startsWith(head)) {
        int from = line.indexOf(name, head.length()) + name.length();
        int to = line.indexOf(',', from);
        return Long.parseLong(line.substring(from, to < 0 ? line.length() : to));
      }
    }
    return 0;
  }
}
