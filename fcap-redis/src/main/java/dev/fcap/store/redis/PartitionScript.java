package dev.fcap.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code partition.lua}, the Lua mirror of {@code PartitionStep}, assembled from the resource files
 * under {@code partition/} in the order their list ({@code partition/files}) gives: one concern per
 * file, named after its Java twin where it has one, so that a change to a Java class has one Lua
 * file to mirror it. The result is one chunk (a local of an earlier file is in scope in every later
 * one), loaded once and called by one digest.
 */
final class PartitionScript {
  private static final String DIR = "partition/";
  /** The one line that chooses the fast path (FastPath.lua); {@link #withoutFastPath} turns it off. */
  static final String FAST_PATH_SWITCH = "local fast = op <= 1 and cost == 1";

  private PartitionScript() {}

  /** The script as the store runs it. */
  static byte[] assembled() {
    return text().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The same script with its fast path switched off, every call taking the general path: what a
   * differential test runs beside {@link #assembled} on the same inputs.
   */
  static byte[] withoutFastPath() {
    String script = text();
    int at = script.indexOf(FAST_PATH_SWITCH);
    if (at < 0 || script.indexOf(FAST_PATH_SWITCH, at + 1) >= 0) {
      throw new IllegalStateException("FastPath.lua must hold exactly one '" + FAST_PATH_SWITCH + "'");
    }
    return script.replace(FAST_PATH_SWITCH, "local fast = false").getBytes(StandardCharsets.UTF_8);
  }

  /** The names of the files, in order. */
  static List<String> files() {
    List<String> names = new ArrayList<>();
    for (String line : read("files").split("\n")) {
      String name = line.strip();
      if (!name.isEmpty() && !name.startsWith("#")) {
        names.add(name);
      }
    }
    return names;
  }

  private static String text() {
    StringBuilder script = new StringBuilder();
    for (String name : files()) {
      script.append(read(name));
      if (script.charAt(script.length() - 1) != '\n') {
        script.append('\n');
      }
    }
    return script.toString();
  }

  private static String read(String name) {
    try (InputStream in = PartitionScript.class.getResourceAsStream(DIR + name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + DIR + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + DIR + name, e);
    }
  }
}
