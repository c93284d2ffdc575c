package dev.fcap.cli;

import static dev.fcap.cli.CliRun.fcap;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.server.ConfigLoader;
import dev.fcap.server.FcapServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fcap suppress} against a running server on the embedded store: an import prints each bad
 * row with its line and says what was applied, check says whether and how a recipient is
 * suppressed, export writes the list back as NDJSON; mistakes say what to fix, exit code 2.
 */
class SuppressCommandIT {
  @TempDir Path dir;

  @Test
  void importCheckAndExportARunningServersList() throws Exception {
    FcapServer server = FcapServer.start(ConfigLoader.load(null, Map.of(), Map.of("listen", "127.0.0.1:0",
        "dataDir", dir.toString(), "audit.sink", "none")));
    try {
      String url = "http://127.0.0.1:" + server.port();
      Path csv = dir.resolve("stop.csv");
      Files.writeString(csv, "recipient,channels,reason\n+1,sms,replied STOP\n+2,,complaint\n+3\n");
      CliRun imported = fcap("suppress", "import", "--url", url, csv.toString());
      assertThat(imported.exit()).as(imported.err()).isEqualTo(1);
      assertThat(imported.out()).contains("line 4: invalid_row").contains("applied 2, rejected 1");

      CliRun yes = fcap("suppress", "check", "--url", url, "+1");
      assertThat(yes.exit()).isZero();
      assertThat(yes.out()).contains("+1: suppressed on sms, every category, no expiry; reason: replied STOP");
      CliRun no = fcap("suppress", "check", "--url", url, "+3");
      assertThat(no.exit()).isEqualTo(1);
      assertThat(no.out()).contains("+3: not suppressed");

      Path ndjson = dir.resolve("more.jsonl");
      Files.writeString(ndjson, "{\"recipient\": \"+4\", \"categories\": [\"marketing\"]}\n");
      assertThat(fcap("suppress", "import", "--url", url, ndjson.toString()).exit()).isZero();
      Path out = dir.resolve("list.ndjson");
      CliRun exported = fcap("suppress", "export", "--url", url, "--out", out.toString());
      assertThat(exported.exit()).as(exported.err()).isZero();
      assertThat(Files.readAllLines(out)).hasSize(3).allSatisfy(l -> assertThat(l).startsWith("{\"recipient\":"));
      assertThat(Files.readAllLines(out).get(2)).contains("\"categories\":[\"marketing\"]");

      CliRun badTenant = fcap("suppress", "check", "--url", url, "--tenant", "no spaces", "+1");
      assertThat(badTenant.exit()).isEqualTo(2);
      assertThat(badTenant.err()).contains("HTTP 400 invalid_field").contains("(field tenant)");
    } finally {
      server.close();
    }
  }

  @Test
  void mistakesSayWhatToFix() throws Exception {
    Path txt = dir.resolve("list.txt");
    Files.writeString(txt, "+1\n");
    CliRun noFormat = fcap("suppress", "import", "--url", "http://127.0.0.1:1", txt.toString());
    assertThat(noFormat.exit()).isEqualTo(2);
    assertThat(noFormat.err()).contains("give --format csv or --format ndjson");
    CliRun unreachable = fcap("suppress", "import", "--url", "http://127.0.0.1:1", "--format", "csv", txt.toString());
    assertThat(unreachable.exit()).isEqualTo(2);
    assertThat(unreachable.err()).contains("cannot reach http://127.0.0.1:1");
  }
}
