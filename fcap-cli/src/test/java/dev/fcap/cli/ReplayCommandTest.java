package dev.fcap.cli;

import static dev.fcap.cli.CliRun.fcap;
import static dev.fcap.cli.CliRun.fcapTo;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplayCommandTest {
  private static final Path SEED = Path.of("../examples/rules.yaml");
  @TempDir Path dir;

  private Path write(String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  /** The seed scenario as a log: 16 messages in a minute, then one at exactly t0 + 1 min. */
  private Path seedScenario() throws IOException {
    StringBuilder csv = new StringBuilder("timestamp,recipient,content\n");
    long t0 = 1_767_225_600_000L;
    for (int i = 0; i < 16; i++) {
      csv.append(t0 + i * 1000L).append(",+8613800000001,message ").append(i).append('\n');
    }
    csv.append(t0 + 60_000).append(",+8613800000001,message 16\n");
    csv.append("2026-01-01T00:01:00.500Z,+8613800000002,\"Hello, \"\"world\"\"\"\n");
    csv.append("2026-01-01T00:01:01Z,+8613800000002,\"Hello, \"\"world\"\"\"\n");
    csv.append("2026-01-01T08:01:02+08:00,+8613800000002,\"Hello, \"\"world\"\"\"\n");
    return write("log.csv", csv.toString());
  }

  @Test
  void writesOneDecisionPerRowInOrder() throws IOException {
    Path decisions = dir.resolve("decisions.txt");
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", seedScenario().toString(),
        "--decisions", decisions.toString());
    assertThat(run.exit()).as(run.err()).isZero();
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      expected.add("true,");
    }
    expected.add("false,recipient-per-minute");
    expected.add("true,");
    expected.add("true,");
    expected.add("true,");
    expected.add("false,same-content-per-59s");
    assertThat(Files.readAllLines(decisions)).containsExactlyElementsOf(expected);
    assertThat(run.out()).contains("rows      20").contains("admitted  18").contains("blocked   2");
  }

  @Test
  void aRowWhoseMessageIdWasDecidedBeforeIsCountedOnce() throws IOException {
    StringBuilder csv = new StringBuilder("timestamp,recipient,messageId\n");
    for (int i = 0; i < 16; i++) {
      csv.append(1000 + i).append(",ann,").append(i == 3 ? "m-2" : "m-" + i).append('\n'); // row 4 retries m-2
    }
    csv.append("2000,ann,m-99\n");
    Path decisions = dir.resolve("decisions.txt");
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", write("ids.csv", csv.toString()).toString(),
        "--decisions", decisions.toString());
    assertThat(run.exit()).as(run.err()).isZero();
    List<String> lines = Files.readAllLines(decisions);
    assertThat(lines.subList(0, 16)).as("15 distinct messages: all admitted").allMatch(l -> l.startsWith("true"));
    assertThat(lines.get(16)).isEqualTo("false,recipient-per-minute");
  }

  @Test
  void summarizesPerRuleAsJson() throws IOException {
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", seedScenario().toString(), "--json");
    assertThat(run.exit()).as(run.err()).isZero();
    JsonNode json = new ObjectMapper().readTree(run.out());
    assertThat(json.get("rows").asLong()).isEqualTo(20);
    assertThat(json.get("admitted").asLong()).isEqualTo(18);
    assertThat(json.get("blocked").asLong()).isEqualTo(2);
    assertThat(json.get("rules").get(0).get("id").asText()).isEqualTo("recipient-per-minute");
    assertThat(json.get("rules").get(0).get("blocked").asLong()).isEqualTo(1);
    assertThat(json.get("rules").get(2).get("blocked").asLong()).isEqualTo(1);
    assertThat(json.get("rules").get(1).get("applied").asLong()).isEqualTo(20);
  }

  @Test
  void shadowRulesReportWhatTheyWouldHaveBlocked() throws IOException {
    Path rules = write("rules.yaml", """
        policies:
          - tenant: default
            rules:
              - {id: strict, limit: 1, window: 1h, key: [recipient], mode: shadow}
              - {id: per-sender, limit: 100, window: 1h, key: [sender]}
        """);
    Path log = write("log.csv", "timestamp,recipient,sender,tenant,cost\n1000,a,s,default,1\n2000,a,s,,1\n3000,b,s,,2\n4000,a,s,,\n");
    CliRun run = fcap("replay", "--rules", rules.toString(), "--log", log.toString(), "--json");
    assertThat(run.exit()).as(run.err()).isZero();
    JsonNode strict = new ObjectMapper().readTree(run.out()).get("rules").get(0);
    assertThat(strict.get("mode").asText()).isEqualTo("shadow");
    assertThat(strict.get("wouldHaveBlocked").asLong()).as("a twice more, and b whose cost 2 exceeds the limit").isEqualTo(3);
    assertThat(new ObjectMapper().readTree(run.out()).get("admitted").asLong()).isEqualTo(4);
  }

  @Test
  void aBadRowStopsTheRunWithItsLineNumberAndReason() throws IOException {
    assertBadLog("timestamp,recipient\n1000,a\nyesterday,b\n", "line 3: timestamp 'yesterday'");
    assertBadLog("timestamp,recipient\n1000,a\n2000,\n", "line 3: recipient is required");
    assertBadLog("timestamp,recipient,cost\n1000,a,-1\n", "line 2: cost must be between 1");
    assertBadLog("timestamp,recipient,cost\n1000,a,one\n", "line 2: cost 'one' is not a whole number");
    assertBadLog("timestamp,recipient\n1000,a,extra\n", "line 2: expected 2 fields, found 3");
    assertBadLog("timestamp,recipient,colour\n", "line 1: unknown column 'colour'");
    assertBadLog("recipient,content\n", "must name the columns timestamp and recipient");
    assertBadLog("timestamp,recipient,content\n1000,a,\"open\n2000,b,x\n", "line 2: a quoted field is not closed");
    assertBadLog("", "the log is empty");
    assertBadLog("timestamp,recipient,content\n1000,a,\"ab\"c\n", "line 2: text after a closing quote ('c')");
  }

  private void assertBadLog(String csv, String expected) throws IOException {
    Path decisions = dir.resolve("d.txt");
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", write("bad.csv", csv).toString(),
        "--decisions", decisions.toString());
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err()).contains(expected);
  }

  @Test
  void aBadRowBatchesIntoTheLogStopsTheRunAtItsOwnLine() throws IOException {
    // parsed on the pipeline's thread two batches ahead of the deciders: still reported at its line
    StringBuilder csv = new StringBuilder("timestamp,recipient,content\n");
    int good = 2 * RowPipeline.BATCH + 100;
    for (int i = 0; i < good; i++) {
      csv.append(1000 + i).append(",r").append(i % 50).append(",c").append(i % 7).append('\n');
    }
    csv.append("soon,b,x\n");
    for (int i = 0; i < 10; i++) {
      csv.append(5_000_000 + i).append(",r1,c1\n");
    }
    assertBadLog(csv.toString(), "line " + (good + 2) + ": timestamp 'soon'");
  }

  @Test
  void quotedFieldsMayHoldLineBreaksAndTheLineCountFollows() throws IOException {
    Path log = write("log.csv", "timestamp,recipient,content\n1000,a,\"two\nlines\"\nbad,b,x\n");
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", log.toString());
    assertThat(run.err()).contains("line 4: timestamp 'bad'");
  }

  @Test
  void aLogWithAByteOrderMarkAndCrlfLineEndingsReplaysAsTheSameLogInLf() throws IOException {
    Path lf = seedScenario();
    String text = Files.readString(lf);
    Path crlf = write("crlf.csv", "\uFEFF" + text.replace("\n", "\r\n"));
    Path a = dir.resolve("a.txt");
    Path b = dir.resolve("b.txt");
    assertThat(fcap("replay", "--rules", SEED.toString(), "--log", lf.toString(), "--decisions", a.toString()).exit())
        .isZero();
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", crlf.toString(), "--decisions", b.toString());
    assertThat(run.exit()).as(run.err()).isZero();
    assertThat(Files.readAllLines(b)).hasSize(20).isEqualTo(Files.readAllLines(a)).contains("false,recipient-per-minute");
  }

  @Test
  void invalidRulesAndMissingFilesSayWhatToFix() throws IOException {
    Path rules = write("rules.yaml", "policies:\n  - tenant: default\n    rules:\n      - {id: r, limit: 0, window: 1m, key: [recipient]}\n");
    CliRun bad = fcap("replay", "--rules", rules.toString(), "--log", seedScenario().toString());
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.err()).contains("rule 'r', field 'limit'");
    CliRun missing = fcap("replay", "--rules", dir.resolve("nope.yaml").toString(), "--log", seedScenario().toString());
    assertThat(missing.err()).contains("rules file not found");
    CliRun noLog = fcap("replay", "--rules", SEED.toString(), "--log", dir.resolve("nope.csv").toString());
    assertThat(noLog.err()).contains("log file not found");
    Path nowhere = dir.resolve("no-such-dir").resolve("decisions.txt");
    CliRun noDir = fcap("replay", "--rules", SEED.toString(), "--log", seedScenario().toString(), "--decisions",
        nowhere.toString());
    assertThat(noDir.exit()).isEqualTo(2);
    assertThat(noDir.err()).contains("cannot write the decisions file " + nowhere).doesNotContain("log file");
    CliRun noArgs = fcap("replay");
    assertThat(noArgs.exit()).isEqualTo(2);
    assertThat(noArgs.err()).contains("Missing required options");
  }

  @Test
  void genWritesADeterministicLogThatReplays() throws IOException {
    Path a = dir.resolve("a.csv");
    Path b = dir.resolve("b.csv");
    assertThat(fcap("gen", "--rows", "2000", "--recipients", "50", "--seed", "7", "--out", a.toString()).exit()).isZero();
    assertThat(fcap("gen", "--rows", "2000", "--recipients", "50", "--seed", "7", "--out", b.toString()).exit()).isZero();
    assertThat(Files.readAllLines(a)).hasSize(2001).isEqualTo(Files.readAllLines(b));
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", a.toString(), "--json");
    assertThat(run.exit()).as(run.err()).isZero();
    assertThat(new ObjectMapper().readTree(run.out()).get("rows").asLong()).isEqualTo(2000);
  }

  @Test
  void decidingOnTwoThreadsByRecipientGivesTheDecisionsOfOneThread() throws IOException {
    Path log = dir.resolve("log.csv");
    assertThat(fcap("gen", "--rows", "30000", "--recipients", "200", "--templates", "10", "--rate", "300",
        "--out", log.toString()).exit()).isZero();
    assertThat(BatchDecider.everyRuleKeyedByRecipient(dev.fcap.policy.PolicyParser.parseFile(SEED))).isTrue();
    Path two = dir.resolve("two.txt");
    Path one = dir.resolve("one.txt");
    assertThat(fcap("replay", "--rules", SEED.toString(), "--log", log.toString(), "--decisions", two.toString()).exit())
        .isZero();
    System.setProperty("fcap.replay.oneThread", "true");
    try {
      assertThat(fcap("replay", "--rules", SEED.toString(), "--log", log.toString(), "--decisions", one.toString())
          .exit()).isZero();
    } finally {
      System.clearProperty("fcap.replay.oneThread");
    }
    assertThat(Files.readAllLines(two)).hasSize(30_000).isEqualTo(Files.readAllLines(one))
        .anyMatch(l -> l.startsWith("false"));
  }

  @Test
  void filesThatAreDirectoriesOrNotTextSayWhyInOneLine() throws IOException {
    Path log = seedScenario();
    CliRun logDir = fcap("replay", "--rules", SEED.toString(), "--log", dir.toString());
    assertThat(logDir.exit()).isEqualTo(2);
    assertThat(logDir.err().strip()).isEqualTo("fcap replay: cannot read the log file " + dir + ": Is a directory");
    CliRun rulesDir = fcap("replay", "--rules", dir.toString(), "--log", log.toString());
    assertThat(rulesDir.exit()).isEqualTo(2);
    assertThat(rulesDir.err().strip()).isEqualTo("fcap replay: cannot read the rules file " + dir + ": Is a directory");
    Path binary = dir.resolve("rules.bin");
    Files.write(binary, new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1, (byte) 0xc3, 0x28});
    CliRun notText = fcap("replay", "--rules", binary.toString(), "--log", log.toString());
    assertThat(notText.exit()).isEqualTo(2);
    assertThat(notText.err().strip()).isEqualTo("fcap replay: cannot read the rules file " + binary
        + ": it is not UTF-8 text; give the rules YAML");
    CliRun decisionsDir = fcap("replay", "--rules", SEED.toString(), "--log", log.toString(), "--decisions",
        dir.toString());
    assertThat(decisionsDir.exit()).isEqualTo(2);
    assertThat(decisionsDir.err().strip()).isEqualTo("fcap replay: cannot write the decisions file " + dir
        + ": Is a directory");
  }

  @Test
  void outputThatCannotBeWrittenFailsTheRun() throws IOException {
    Path log = seedScenario();
    CliRun decisions = fcap("replay", "--rules", SEED.toString(), "--log", log.toString(), "--decisions", "/dev/full");
    assertThat(decisions.exit()).isEqualTo(1);
    assertThat(decisions.err().strip())
        .isEqualTo("fcap replay: cannot write the decisions file /dev/full: No space left on device");
    try (FileOutputStream full = new FileOutputStream("/dev/full")) {
      CliRun json = fcapTo(CliOutput.over(full), "replay", "--rules", SEED.toString(), "--log", log.toString(),
          "--json");
      assertThat(json.exit()).isEqualTo(1);
      assertThat(json.err().strip()).isEqualTo("fcap replay: cannot write the output: No space left on device");
    }
  }

  @Test
  void controlCharactersOfABadHeaderAreEscapedInTheMessage() throws IOException {
    Path log = write("bad.csv", "timestamp,recipient,a\u0007\u001b[2Jb\n1000,x,y\n");
    CliRun run = fcap("replay", "--rules", SEED.toString(), "--log", log.toString());
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err()).contains("line 1: unknown column 'a\\u0007\\u001B[2Jb'")
        .doesNotContain("\u001b").doesNotContain("\u0007");
  }

  @Test
  void helpListsEveryColumnTheLogMayName() {
    CliRun help = fcap("replay", "--help");
    assertThat(help.exit()).isZero();
    String text = help.out().replaceAll("\\s+", " ");
    assertThat(SendLog.KNOWN).contains("messageId", "timeZone", "priority", "override", "defer", "notAfter");
    for (String column : SendLog.KNOWN) {
      assertThat(text).containsPattern(" " + column + "[,;]");
    }
    assertThat(text).contains("attr:NAME.");
  }
}
