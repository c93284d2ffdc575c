package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.redis.testing.RedisExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** A replay on Redis (rows' timestamps as the clock) writes the same decisions as on the embedded store. */
class ReplayOnRedisIT {
  @RegisterExtension static final RedisExtension REDIS = RedisExtension.standalone();
  @TempDir Path dir;

  private static int fcap(String... args) {
    CommandLine cli = new CommandLine(new Fcap());
    StringWriter err = new StringWriter();
    cli.setOut(new PrintWriter(new StringWriter()));
    cli.setErr(new PrintWriter(err, true));
    int exit = cli.execute(args);
    assertThat(exit).as(err.toString()).isZero();
    return exit;
  }

  @Test
  void redisAndTheEmbeddedStoreWriteIdenticalDecisionFiles() throws Exception {
    Path log = dir.resolve("log.csv");
    fcap("gen", "--rows", "20000", "--recipients", "300", "--templates", "20", "--rate", "200", "--out", log.toString());
    Path onMemory = dir.resolve("memory.txt");
    Path onRedis = dir.resolve("redis.txt");
    fcap("replay", "--rules", "../examples/rules.yaml", "--log", log.toString(), "--decisions", onMemory.toString());
    fcap("replay", "--rules", "../examples/rules.yaml", "--log", log.toString(), "--decisions", onRedis.toString(),
        "--store", REDIS.uri());
    assertThat(Files.readAllLines(onRedis)).hasSize(20_000).isEqualTo(Files.readAllLines(onMemory));
    assertThat(Files.readAllLines(onMemory)).as("the log exercises refusals").anyMatch(l -> l.startsWith("false"))
        .anyMatch(l -> l.contains("same-content")).anyMatch(l -> l.contains("recipient-per-minute"));
  }

  @Test
  void anUnreachableOrMalformedStoreSaysWhatIsWrong() {
    CommandLine cli = new CommandLine(new Fcap());
    StringWriter err = new StringWriter();
    cli.setErr(new PrintWriter(err, true));
    int exit = cli.execute("replay", "--rules", "../examples/rules.yaml", "--log", "x.csv", "--store", "mongodb://x");
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString()).contains("cannot use --store mongodb://x");
  }
}
