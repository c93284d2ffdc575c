package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.oracle.DeferralOracle;
import dev.fcap.oracle.DeferralOracleProperties;
import dev.fcap.policy.PolicyParser;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code fcap replay} of logs with the columns {@code defer} and {@code notAfter} against the
 * {@link DeferralOracle}: random policies of sliding-log rules and send windows in zones with
 * daylight saving, deferred rows (by default, until an instant ahead, until one already past) beside
 * plain ones, message-id retries and clock steps back, on one and on two decider threads. The
 * decisions file must equal the oracle's line on every row: {@code true,}, {@code false,RULES} or
 * {@code deferred,SENDAT}.
 */
class ReplayDeferralOracleTest {
  static final int ROWS = Integer.getInteger("fcap.oracle.replayRows", 2_000);

  @TempDir Path dir;

  @ParameterizedTest(name = "policy {0}, {1} decider thread(s)")
  @CsvSource({"1, 1", "1, 2", "7, 1", "7, 2", "29, 2", "40, 2"})
  void deferredRowsMatchTheOracle(long seed, int threads) throws IOException {
    // the decisions file against the oracle's lines, row by row, as the windows' replay test compares it
    ReplayWindowsOracleTest.assertReplayMatches(logAndOracle(dir, seed, ROWS), threads, null);
  }

  /** A log of {@code rows} rows of policy {@code seed}'s traffic in {@code dir}, and the oracle's decision lines. */
  static ReplayWindowsOracleTest.Expected logAndOracle(Path dir, long seed, int rows) throws IOException {
    SplittableRandom random = new SplittableRandom(seed);
    Policy policy = DeferralOracleProperties.randomPolicy(random);
    Path rules = Files.writeString(dir.resolve("rules-" + seed + ".yaml"), PolicyParser.toYaml(List.of(policy)));
    Path log = dir.resolve("log-" + seed + ".csv");
    // replay's engine releases nothing by decision id: a message id is remembered for the longest window
    DeferralOracle oracle = new DeferralOracle(PolicyParser.parseFile(rules).get(0), 0);
    List<String> expected = new ArrayList<>(rows);
    long now = DeferralOracleProperties.START;
    try (Writer w = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
      w.write("timestamp,recipient,content,cost,timeZone,priority,messageId,defer,notAfter\n");
      for (int i = 0; i < rows; i++) {
        now = DeferralOracleProperties.advance(random, now);
        Message m = DeferralOracleProperties.randomMessage(random, now);
        w.write(now + "," + m.recipient() + "," + m.content() + "," + m.cost() + ","
            + (m.timeZone() == null ? "" : m.timeZone().getId()) + "," + m.priority() + ","
            + (m.messageId() == null ? "" : m.messageId()) + "," + (m.defer() != null) + ","
            + (m.defer() == null || !m.defer().hasNotAfter() ? "" : m.defer().notAfter()) + "\n");
        DeferralOracle.Expected want = oracle.decide(m, now, "row" + i);
        expected.add(want.allowed() ? "true," : want.deferred() ? "deferred," + want.sendAt()
            : "false," + String.join(";", want.blockedBy()));
      }
    }
    assertThat(expected).as("some rows are booked").anyMatch(l -> l.startsWith("deferred,"));
    assertThat(expected).as("some rows are refused").anyMatch(l -> l.startsWith("false,"));
    return new ReplayWindowsOracleTest.Expected(rules, log, expected, 0, 0);
  }
}
