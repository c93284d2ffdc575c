package dev.fcap.cli;

import static dev.fcap.cli.CliRun.fcap;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code timeZone} column of a send log: each row's own zone, and an unknown one stops the replay at its line. */
class ReplayTimeZoneTest {
  private static final Path SEED = Path.of("../examples/rules.yaml");
  @TempDir Path dir;

  @Test
  void eachRowCarriesItsOwnZone() throws IOException {
    String csv = "timestamp,recipient,timeZone\n1000,a,Asia/Kathmandu\n2000,a,\n3000,b,Australia/Lord_Howe\n"
        + "4000,a,Asia/Kathmandu\n";
    try (SendLog log = new SendLog(new StringReader(csv))) {
      assertThat(log.next().message().timeZone()).isEqualTo(ZoneId.of("Asia/Kathmandu"));
      assertThat(log.next().message().timeZone()).isNull();
      assertThat(log.next().message().timeZone()).isEqualTo(ZoneId.of("Australia/Lord_Howe"));
      assertThat(log.next().message().timeZone()).isEqualTo(ZoneId.of("Asia/Kathmandu"));
      assertThat(log.next()).isNull();
    }
  }

  @Test
  void aLogWithZonesReplays() throws IOException {
    Path log = Files.writeString(dir.resolve("log.csv"),
        "timestamp,recipient,content,timeZone\n1000,a,x,America/New_York\n2000,a,x,Europe/London\n3000,a,x,UTC\n");
    Path decisions = dir.resolve("decisions.txt");
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", log.toString(), "--decisions",
        decisions.toString());
    assertThat(run.exit()).as(run.err()).isZero();
    assertThat(Files.readAllLines(decisions)).containsExactly("true,", "true,", "false,same-content-per-59s");
  }

  @Test
  void anUnknownZoneStopsTheReplayAtItsLine() throws IOException {
    Path log = Files.writeString(dir.resolve("bad.csv"),
        "timestamp,recipient,timeZone\n1000,a,Asia/Kolkata\n2000,b,Asia/Kolkatta\n3000,c,UTC\n");
    Path decisions = dir.resolve("d.txt");
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", log.toString(), "--decisions",
        decisions.toString());
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err()).contains("line 3: timeZone 'Asia/Kolkatta' is not a time zone")
        .contains("column timeZone");
    assertThat(List.of(run.out(), run.err()).toString()).doesNotContain("rows      3");
  }
}
