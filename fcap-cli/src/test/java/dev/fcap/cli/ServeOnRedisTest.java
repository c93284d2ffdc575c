package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `fcap serve` knows Redis URIs (fcap-server-redis is in the CLI's class path) and says what fails. */
class ServeOnRedisTest {
  @TempDir Path dir;

  @Test
  void anUnreachableRedisStoreStopsTheStartNamingTheSetting() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    Path config = dir.resolve("fcap.yaml");
    Files.writeString(config, "listen: 127.0.0.1:0\nstore:\n  uri: redis://127.0.0.1:" + closed
        + "\naudit:\n  sink: none\nrules:\n  source: " + dir.resolve("rules.yaml") + "\n");
    CliRun run = CliRun.fcap("serve", "--config", config.toString());
    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.err()).contains("store.uri").contains("cannot open the Redis store at redis://127.0.0.1:"
        + closed).doesNotContain("no store handles");
  }
}
