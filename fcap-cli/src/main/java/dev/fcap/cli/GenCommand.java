package dev.fcap.cli;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
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

  /** The latest time a row may have: {@code fcap replay} reads a timestamp of at most 15 digits. */
  static final long LATEST = 999_999_999_999_999L;

  @Override
  public Integer call() {
    check(rows >= 0, "--rows must be 0 or more (got " + rows + ")");
    check(recipients >= 1, "--recipients must be 1 or more (got " + recipients + ")");
    check(templates >= 1, "--templates must be 1 or more (got " + templates + ")");
    check(uniqueShare >= 0 && uniqueShare <= 1, "--unique-share must be a share from 0 to 1 (got " + uniqueShare + ")");
    check(Double.isFinite(exponent) && exponent >= 0, "--zipf must be a finite number, 0 (uniform) or more (got "
        + exponent + ")");
    check(Double.isFinite(rate) && rate > 0, "--rate must be a finite number of rows per second above 0 (got " + rate
        + ")");
    check(!start.isBefore(Instant.EPOCH) && !start.isAfter(Instant.ofEpochMilli(LATEST)), "--start must be from "
        + Instant.EPOCH + " to " + Instant.ofEpochMilli(LATEST) + ", the times fcap replay reads (got " + start + ")");
    long t0 = start.toEpochMilli();
    check(rows == 0 || t0 + (rows - 1) * 1000.0 / rate <= LATEST, "--rows " + rows + " at --rate " + rate
        + " rows per second from --start " + start + " would end after " + Instant.ofEpochMilli(LATEST)
        + ", the latest time fcap replay reads: raise --rate or lower --rows");
    if (out == null) {
      PrintWriter stdout = spec.commandLine().getOut();
      Writer w = new BufferedWriter(stdout, 1 << 16);
      try {
        write(w, t0, stdout);
        w.flush();
      } catch (IOException e) {
        throw new IllegalStateException(e); // a PrintWriter does not throw: check() below says why it failed
      }
      CliOutput.check(stdout, "the output");
      return 0;
    }
    Writer w;
    try {
      w = Files.newBufferedWriter(out, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw CliException.usage("cannot write --out " + out + ": " + CliOutput.reason(e));
    }
    try (w) {
      write(w, t0, null);
    } catch (IOException e) {
      throw CliException.failed("cannot write --out " + out + ": " + CliOutput.reason(e));
    }
    return 0;
  }

  private static void check(boolean valid, String message) {
    if (!valid) {
      throw CliException.usage(message);
    }
  }

  /** Writes the log; stops early once {@code stdout}, if given, has failed (check() then says why). */
  private void write(Writer w, long t0, PrintWriter stdout) throws IOException {
    SplittableRandom random = new SplittableRandom(seed);
    Zipf who = new Zipf(recipients, exponent);
    Zipf what = new Zipf(templates, exponent);
    w.write("timestamp,recipient,category,content\n");
    StringBuilder line = new StringBuilder(96);
    for (long i = 0; i < rows; i++) {
      if ((i & 0xFFFF) == 0xFFFF && stdout != null && stdout.checkError()) {
        return;
      }
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
}
