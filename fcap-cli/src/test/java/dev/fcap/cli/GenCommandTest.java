package dev.fcap.cli;

import static dev.fcap.cli.CliRun.fcap;
import static dev.fcap.cli.CliRun.fcapTo;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fcap gen} refuses each bad option on a line of its own, naming it and its range, and says
 * when its output cannot be written instead of exiting 0 ({@code /dev/full} fails every write with
 * ENOSPC).
 */
class GenCommandTest {
  @TempDir Path dir;

  private static void assertRefused(String expected, String... args) {
    CliRun run = fcap(args);
    assertThat(run.exit()).as(run.err()).isEqualTo(2);
    assertThat(run.err().strip()).isEqualTo("fcap gen: " + expected);
  }

  @Test
  void eachBadNumberIsRefusedNamingItsOptionAndRange() {
    assertRefused("--rate must be a finite number of rows per second above 0 (got NaN)", "gen", "--rate", "NaN");
    assertRefused("--rate must be a finite number of rows per second above 0 (got Infinity)", "gen", "--rate",
        "Infinity");
    assertRefused("--rate must be a finite number of rows per second above 0 (got 0.0)", "gen", "--rate", "0");
    assertRefused("--zipf must be a finite number, 0 (uniform) or more (got NaN)", "gen", "--zipf", "NaN");
    assertRefused("--zipf must be a finite number, 0 (uniform) or more (got -1.0)", "gen", "--zipf", "-1");
    assertRefused("--unique-share must be a share from 0 to 1 (got NaN)", "gen", "--unique-share", "NaN");
    assertRefused("--unique-share must be a share from 0 to 1 (got 1.5)", "gen", "--unique-share", "1.5");
    assertRefused("--rows must be 0 or more (got -1)", "gen", "--rows", "-1");
    assertRefused("--recipients must be 1 or more (got 0)", "gen", "--recipients", "0");
    assertRefused("--templates must be 1 or more (got 0)", "gen", "--templates", "0");
  }

  @Test
  void timesOutsideWhatReplayReadsAreRefused() {
    CliRun farPast = fcap("gen", "--rows", "10", "--start", "-999999999-01-01T00:00:00Z");
    assertThat(farPast.exit()).isEqualTo(2);
    assertThat(farPast.err()).startsWith("fcap gen: --start must be from 1970-01-01T00:00:00Z to ")
        .doesNotContain("Exception");
    CliRun slow = fcap("gen", "--rows", "10", "--rate", "1e-300");
    assertThat(slow.exit()).isEqualTo(2);
    assertThat(slow.err()).startsWith("fcap gen: --rows 10 at --rate 1.0E-300 rows per second")
        .contains("raise --rate or lower --rows");
  }

  @Test
  void anOutFileThatCannotBeOpenedIsAUsageError() {
    Path nowhere = dir.resolve("nonexist").resolve("x.csv");
    CliRun noDir = fcap("gen", "--rows", "10", "--out", nowhere.toString());
    assertThat(noDir.exit()).isEqualTo(2);
    assertThat(noDir.err().strip()).isEqualTo("fcap gen: cannot write --out " + nowhere + ": its directory does not exist");
    CliRun aDir = fcap("gen", "--rows", "10", "--out", dir.toString());
    assertThat(aDir.exit()).isEqualTo(2);
    assertThat(aDir.err().strip()).isEqualTo("fcap gen: cannot write --out " + dir + ": Is a directory");
  }

  @Test
  void aFullDiskIsReportedForAFileAndForStandardOutput() throws IOException {
    CliRun file = fcap("gen", "--rows", "100000", "--out", "/dev/full");
    assertThat(file.exit()).isEqualTo(1);
    assertThat(file.err().strip()).isEqualTo("fcap gen: cannot write --out /dev/full: No space left on device");
    try (FileOutputStream full = new FileOutputStream("/dev/full")) {
      CliRun stdout = fcapTo(CliOutput.over(full), "gen", "--rows", "100000");
      assertThat(stdout.exit()).isEqualTo(1);
      assertThat(stdout.err().strip()).isEqualTo("fcap gen: cannot write the output: No space left on device");
    }
  }

  @Test
  void writesToStandardOutputWhenNoFileIsGiven() throws IOException {
    CliRun run = fcap("gen", "--rows", "3", "--recipients", "5");
    assertThat(run.exit()).as(run.err()).isZero();
    assertThat(run.out().lines()).hasSize(4).first().isEqualTo("timestamp,recipient,category,content");
    Path file = dir.resolve("a.csv");
    assertThat(fcap("gen", "--rows", "3", "--recipients", "5", "--out", file.toString()).exit()).isZero();
    assertThat(Files.readString(file)).isEqualTo(run.out());
  }
}
