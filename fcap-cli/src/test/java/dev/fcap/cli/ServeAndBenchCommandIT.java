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

class ServeAndBenchCommandIT {
  @TempDir Path dir;

  @Test
  void serveRefusesABadConfigNamingTheSetting() throws Exception {
    Path config = dir.resolve("fcap.yaml");
    Files.writeString(config, "store:\n  timeout: soon\n");
    CliRun r = fcap("serve", "--config", config.toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("configuration error").contains("store.timeout").contains(config.toString());
  }

  @Test
  void serveRefusesInvalidRulesNamingRuleAndField() throws Exception {
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(rules, "policies:\n  - tenant: default\n    rules:\n      - {id: r1, limit: 0, window: 1m, key: [recipient]}\n");
    CliRun r = fcap("serve", "--listen", "127.0.0.1:0", "--rules", rules.toString(), "--audit", "none");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("rule 'r1'").contains("field 'limit'");
  }

  @Test
  void benchRefusesNonLoopbackTargets() {
    CliRun r = fcap("bench", "--url", "http://192.0.2.1:8080", "--duration", "1s");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("loopback");
  }

  @Test
  void benchRefusesARateItCannotPace() {
    CliRun r = fcap("bench", "--rate", "0", "--duration", "1s");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--rate must be 1 to 10000000 requests per second (got 0.0)");
  }

  @Test
  void benchLoadsARunningServerOverHttpAndGrpc() {
    FcapServer server = FcapServer.start(ConfigLoader.load(null, Map.of(), Map.of("listen", "127.0.0.1:0",
        "rules.source", dir.resolve("rules.yaml").toString(), "audit.sink", "none")));
    try {
      String url = "http://127.0.0.1:" + server.port();
      CliRun http = fcap("bench", "--url", url, "--duration", "60s", "--warmup", "100ms", "--requests", "300",
          "--concurrency", "4");
      assertThat(http.exit()).as(http.err()).isEqualTo(0);
      assertThat(http.out()).contains("requests     300").contains("degraded     0 decisions")
          .contains("errors       0 requests, 0 batch items").contains("verdict      valid throughput figure");
      CliRun grpc = fcap("bench", "--url", url, "--protocol", "grpc", "--batch", "50", "--duration", "60s", "--warmup",
          "100ms", "--requests", "20", "--concurrency", "2");
      assertThat(grpc.exit()).as(grpc.err()).isEqualTo(0);
      assertThat(grpc.out()).contains("decisions    1,000");
      // open loop: the count follows from the rate and the duration, not from how fast answers come
      CliRun paced = fcap("bench", "--url", url, "--rate", "200", "--duration", "1s", "--warmup", "100ms",
          "--concurrency", "8");
      assertThat(paced.exit()).as(paced.err()).isEqualTo(0);
      assertThat(paced.out()).contains("open loop at 200 requests/s, at most 8 in flight").contains("requests     200 ")
          .containsPattern("generator    [0-9.]+% of requests sent > 1 ms after their instant");
    } finally {
      server.close();
    }
  }

  @Test
  void aRunWithDegradedDecisionsIsNotAValidThroughputFigure() {
    // a full embedded store: new recipients get the failure policy (degraded), not the store
    FcapServer server = FcapServer.start(ConfigLoader.load(null, Map.of(), Map.of("listen", "127.0.0.1:0",
        "rules.source", dir.resolve("rules.yaml").toString(), "audit.sink", "none", "store.maxBytes", "4KB")));
    try {
      CliRun run = fcap("bench", "--url", "http://127.0.0.1:" + server.port(), "--batch", "100", "--duration", "60s",
          "--warmup", "100ms", "--requests", "20", "--concurrency", "2");
      assertThat(run.exit()).as(run.out()).isEqualTo(1);
      assertThat(run.out()).containsPattern("degraded     [1-9][0-9,]* decisions")
          .contains("NOT a valid throughput figure");
    } finally {
      server.close();
    }
  }
}
