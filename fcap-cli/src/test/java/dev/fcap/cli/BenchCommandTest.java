package dev.fcap.cli;

import static dev.fcap.cli.CliRun.fcap;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code fcap bench} refuses bad options in one line, exit code 2, before it sends anything. */
class BenchCommandTest {
  private static void assertRefused(String expected, String... args) {
    CliRun run = fcap(args);
    assertThat(run.exit()).as(run.err()).isEqualTo(2);
    assertThat(run.err().strip()).isEqualTo("fcap bench: " + expected);
  }

  @Test
  void aDurationThatIsNoneNamesItsOption() {
    assertRefused("--duration 'soon' is not a duration; give one such as 500ms, 10s, 1m or 1h30m", "bench",
        "--duration", "soon");
    assertRefused("--warmup 'never' is not a duration; give one such as 500ms, 10s, 1m or 1h30m", "bench",
        "--warmup", "never");
  }

  @Test
  void aServerPidWithoutAProcessIsRefused() {
    assertRefused("--server-pid 999999999: no such process (/proc/999999999/stat cannot be read); give the running "
        + "server's process id", "bench", "--server-pid", "999999999", "--duration", "1s");
  }

  @Test
  void aUrlThatIsNoneSaysSo() {
    assertRefused("--url notaurl is not an http:// or https:// URL with a host; give one such as "
        + "http://127.0.0.1:8080", "bench", "--url", "notaurl");
    assertRefused("--url http://127.0.0.1:99999: port 99999 is out of range; a port is 1 to 65535", "bench", "--url",
        "http://127.0.0.1:99999");
  }
}
