package dev.fcap.cli;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code fcap gen}: a synthetic send log at the seed platform's shape, for replays and benchmarks:
 * Zipf-popular recipients, Zipf-popular templates, a share of one-off contents (codes), a steady
 * rate. Deterministic for a seed.
 */
@Command(name = "gen", mixinStandardHelpOptions = true,
    description = "Write a synthetic send log (CSV: timestamp,recipient,category,content) for replay and benchmarks.")
final class GenCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--rows", defaultValue = "1000000", description = "rows to write; default ${DEFAULT-VALUE}")
  long rows;

  @Option(names = "--recipients", defaultValue = "1000000", description = "distinct recipients; default ${DEFAULT-VALUE}")
  int recipients;

  @Option(names = "--templates", defaultValue = "500", description = "distinct repeated contents; default ${DEFAULT-VALUE}")
  int templates;

  @Option(names = "--unique-share", defaultValue = "0.3",
      description = "share of rows with a one-off content (codes); default ${DEFAULT-VALUE}")
  double uniqueShare;

  @Option(names = "--zipf", defaultValue = "1.0", description = "Zipf exponent of popularity; default ${DEFAULT-VALUE}")
  double exponent;

  @Option(names = "--rate", defaultValue = "35000", description = "rows per second of log time; default ${DEFAULT-VALUE}")
  double rate;

  @Option(names = "--start", defaultValue = "2026-11-01T00:00:00Z", description = "time of the first row (ISO-8601)")
  Instant start;

  @Option(names = "--seed", defaultValue = "1", description = "random seed; default ${DEFAULT-VALUE}")
  long seed;

  @Option(names = "--out", paramLabel = "FILE", description = "output file; default stdout")
  Path out;

  @Override
  public Integer call() throws IOException {
    if (rows < 0 || recipients < 1 || templates < 1 || rate <= 0 || uniqueShare < 0 || uniqueShare > 1) {
      spec.commandLine().getErr().println("fcap gen: --rows >= 0, --recipients >= 1, --templates >= 1, --rate > 0 "
          + "and --unique-share in [0, 1] are required");
      return 2;
    }
    SplittableRandom random = new SplittableRandom(seed);
    Zipf who = new Zipf(recipients, exponent);
    Zipf what = new Zipf(templates, exponent);
    long t0 = start.toEpochMilli();
    try (Writer w = out == null
        ? new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16)
        : Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
      w.write("timestamp,recipient,category,content\n");
      StringBuilder line = new StringBuilder(96);
      for (long i = 0; i < rows; i++) {
        long time = t0 + (long) (i * 1000 / rate);
        line.setLength(0);
        line.append(time).append(",+86139").append(String.format("%08d", who.next(random)));
        if (random.nextDouble() < uniqueShare) {
          line.append(",transactional,Your verification code is ").append(100000 + random.nextInt(900000));
        } else {
          line.append(",marketing,Offer ").append(what.next(random)).append(": reply STOP to opt out");
        }
        w.append(line).append('\n');
      }
    }
    return 0;
  }
}
