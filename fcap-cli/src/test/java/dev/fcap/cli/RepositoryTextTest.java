package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What a reader of the repository follows leads somewhere inside it: no document or comment sends
 * them to a file the repository does not hold, and every reference to a section of the README names a
 * heading the README has.
 */
class RepositoryTextTest {
  static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
  private static final Set<String> SKIPPED_DIRS = Set.of(".git", "target", "node_modules", "data", ".idea");
  /** Files that live outside the repository (assembled so that this file does not name them itself). */
  private static final List<String> OUTSIDE = List.of("DESIGN" + ".md", "STYLE" + ".md", "../" + "shared");
  private static final Pattern README_SECTION = Pattern.compile("README(?:\\.md)?,? \"([^\"\\n]+)\"");

  @Test
  void nothingPointsAtFilesOutsideTheRepository() throws IOException {
    List<String> found = new ArrayList<>();
    for (Path f : textFiles()) {
      String text = read(f);
      for (String name : OUTSIDE) {
        if (text != null && text.contains(name)) {
          found.add(ROOT.relativize(f) + " names " + name);
        }
      }
    }
    assertThat(found).isEmpty();
  }

  @Test
  void everyReadmeSectionNamedExists() throws IOException {
    List<String> headings = Files.readAllLines(ROOT.resolve("README.md")).stream()
        .filter(l -> l.startsWith("#")).map(l -> l.replaceFirst("^#+\\s*", "").trim()).toList();
    List<String> missing = new ArrayList<>();
    for (Path f : textFiles()) {
      String text = read(f);
      if (text == null) {
        continue;
      }
      Matcher m = README_SECTION.matcher(text);
      while (m.find()) {
        if (!headings.contains(m.group(1))) {
          missing.add(ROOT.relativize(f) + ": README \"" + m.group(1) + "\"");
        }
      }
    }
    assertThat(missing).as("references to README headings that do not exist").isEmpty();
  }

  private static List<Path> textFiles() throws IOException {
    try (Stream<Path> all = Files.walk(ROOT)) {
      return all.filter(Files::isRegularFile)
          .filter(p -> {
            for (Path part : ROOT.relativize(p)) {
              if (SKIPPED_DIRS.contains(part.toString())) {
                return false;
              }
            }
            return true;
          })
          .toList();
    }
  }

  /** The file as UTF-8 text, or null for a binary file. */
  private static String read(Path f) throws IOException {
    if (Files.size(f) > 2_000_000) {
      return null;
    }
    try {
      return Files.readString(f, StandardCharsets.UTF_8);
    } catch (MalformedInputException e) {
      return null;
    }
  }
}
