package dev.fcap.cli;

import static dev.fcap.cli.CliRun.fcap;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fcap replay} parses on one thread and decides on one or two others ({@link RowPipeline},
 * {@link BatchDecider}); its decisions file must be byte for byte the one of the plainest replay:
 * read a row, decide it at its time, write its line, all on one thread, with no batches.
 */
class ReplayPipelineTest {
  private static final Path SEED = Path.of("../examples/rules.yaml");
  @TempDir Path dir;

  @Test
  void theDecisionsFileIsTheOneOfReadingAndDecidingRowByRowOnOneThread() throws IOException {
    Path log = dir.resolve("log.csv");
    assertThat(fcap("gen", "--rows", "200000", "--out", log.toString()).exit()).isZero(); // the seed log
    byte[] expected = oneThreadRowByRow(PolicyParser.parseFile(SEED), log);
    assertThat(new String(expected, StandardCharsets.UTF_8)).as("the log meets the limits")
        .contains("false,recipient-per-minute").contains("true,");
    for (boolean oneDecider : new boolean[] {false, true}) {
      Path out = dir.resolve("decisions-" + oneDecider + ".txt");
      ReplayOracleTest.replay(oneDecider, "--rules", SEED.toString(), "--log", log.toString(), "--decisions",
          out.toString(), "--progress-every", "0");
      assertThat(Files.readAllBytes(out)).as("one decider thread: %s", oneDecider).isEqualTo(expected);
    }
  }

  /** The decisions file of deciding row by row on one thread, from each row's {@code Decision}. */
  private static byte[] oneThreadRowByRow(List<Policy> policies, Path log) throws IOException {
    StringBuilder file = new StringBuilder();
    ReplayVerdictsTest.reference(policies, log).lines().forEach(l -> file.append(l).append('\n'));
    return file.toString().getBytes(StandardCharsets.UTF_8);
  }
}
