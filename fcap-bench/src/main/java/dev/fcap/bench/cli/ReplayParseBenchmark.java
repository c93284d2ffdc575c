package dev.fcap.bench.cli;

import dev.fcap.cli.CsvRecords;
import dev.fcap.cli.SendLog;
import dev.fcap.cli.SendLogCsv;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Rows per second of {@code fcap replay}'s reading step (UTF-8 bytes to {@link SendLog.Row}s, the
 * {@code Message} validated), with fcap's own CSV reader ({@link SendLogCsv}), its
 * predecessor ({@link ReadLineCsv}, the baseline) and three libraries ({@link LibraryCsv}), on the same generated 10^6-row log: all the replay's columns, a
 * third of the contents quoted (commas, doubled quotes, now and then a line break), recipients
 * such as {@code +8613900001234}, <code>{a}</code>, <code>a}{b</code> and {@code 名字}, a message id per row.
 * One operation is one row: the scores are rows/s, {@code -prof gc}'s
 * {@code gc.alloc.rate.norm} is bytes per row, and {@code cpuNanos / rows} (aux counters) the CPU
 * time per row of the reading thread. Before measuring, every parser's rows are checked
 * equal to fcap's (time and message; the line numbers are each parser's own).
 *
 * <p>Run: {@code java -jar fcap-bench/target/fcap-bench.jar ReplayParseBenchmark -prof gc} (see
 * docs/benchmarks.md).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@OperationsPerInvocation(ReplayParseBenchmark.ROWS)
@State(Scope.Benchmark)
public class ReplayParseBenchmark {
  static final int ROWS = 1_000_000;

  /** The parser under test. */
  @Param({"fcap", "fcap-before", "fastcsv", "univocity", "jackson"})
  public String parser;

  byte[] log;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    log = sendLog(ROWS, 1).getBytes(StandardCharsets.UTF_8);
    try (SendLog mine = new SendLog(records("fcap")); SendLog theirs = new SendLog(records(parser))) {
      long n = 0;
      for (SendLog.Row a = mine.next(); a != null; a = mine.next(), n++) {
        SendLog.Row b = theirs.next();
        if (b == null || a.time() != b.time() || !a.message().equals(b.message())) { // lines: each parser's own
          throw new IllegalStateException(parser + " read row " + n + " as " + b + ", fcap as " + a);
        }
      }
      if (theirs.next() != null || n != ROWS) {
        throw new IllegalStateException(parser + " read more rows than fcap (" + n + ")");
      }
    }
  }

  /**
   * The CPU time of the measuring thread and the rows it read, per iteration: their ratio (CPU ns
   * per row) holds on a machine shared with other work, where rows/s follows the load.
   */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class Cpu {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    public long cpuNanos;
    public long rows;
  }

  @Benchmark
  public long readRows(Blackhole bh, Cpu cpu) throws IOException {
    long started = Cpu.THREADS.getCurrentThreadCpuTime();
    long n = 0;
    try (SendLog rows = new SendLog(records(parser))) {
      for (SendLog.Row row = rows.next(); row != null; row = rows.next()) {
        bh.consume(row);
        n++;
      }
    }
    cpu.cpuNanos += Cpu.THREADS.getCurrentThreadCpuTime() - started;
    cpu.rows += n;
    return n;
  }

  private CsvRecords records(String which) throws IOException {
    Reader in = new InputStreamReader(new ByteArrayInputStream(log), StandardCharsets.UTF_8);
    return switch (which) {
      case "fcap" -> new SendLogCsv(in);
      case "fcap-before" -> new ReadLineCsv(in);
      case "fastcsv" -> LibraryCsv.fastCsv(in);
      case "univocity" -> LibraryCsv.univocity(in);
      case "jackson" -> LibraryCsv.jackson(in);
      default -> throw new IllegalArgumentException("unknown parser " + which);
    };
  }

  /** A send log of {@code rows} rows with every column the replay reads; deterministic for a seed. */
  static String sendLog(int rows, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    String[] shapes = {"+86139%08d", "{a}%d", "a}{b%d", "名字%d"};
    String[] channels = {"sms", "push", "email"};
    StringBuilder csv = new StringBuilder(rows * 120);
    csv.append("timestamp,recipient,tenant,channel,sender,category,content,cost,messageId\n");
    long t0 = 1_793_491_200_000L;
    for (int i = 0; i < rows; i++) {
      csv.append(t0 + i / 35).append(',')
          .append(String.format(shapes[random.nextInt(shapes.length)], random.nextInt(1_000_000))).append(",default,")
          .append(channels[random.nextInt(channels.length)]).append(",shop-").append(random.nextInt(50)).append(',');
      int kind = random.nextInt(3);
      if (kind == 0) {
        csv.append("transactional,Your verification code is ").append(100_000 + random.nextInt(900_000));
      } else if (kind == 1) {
        csv.append("marketing,Offer ").append(random.nextInt(500)).append(": reply STOP to opt out");
      } else {
        csv.append("marketing,\"Hello, \"\"friend\"\"").append(random.nextInt(100) == 0 ? "\nsee you" : "")
            .append(" #").append(random.nextInt(500)).append('"');
      }
      csv.append(',').append(1 + random.nextInt(2)).append(",m-").append(i).append('\n');
    }
    return csv.toString();
  }
}
