package dev.fcap.bench;

import dev.fcap.model.Message;
import dev.fcap.store.memory.Durability;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Decisions per second for the seed policy: fcap (Engine + MemoryStore) and the peers, each fed the
 * same {@link Workload} stream (10^6 Zipf recipients, Zipf templates plus unique contents), on the
 * wall clock. Every implementation keeps state for every key it sees; nothing is reset between
 * iterations, so hot recipients hit their limits as they would in production. The aux counters
 * {@code admitted}/{@code refused} show how much each implementation let through.
 *
 * <p>{@code fcap-sim} is fcap on a simulated clock that advances 1 ms every {@link #DECISIONS_PER_MS}
 * decisions (the seed platform's peak of 100,000 decisions/s): the traffic then meets the limits
 * at production rates whatever the speed of the machine, whereas on the wall clock a fast
 * implementation replays the stream many times a minute and ends up refusing nearly everything.
 * Of the peers only Bucket4j can be given a clock (Guava, Resilience4j and Sentinel read the
 * system's): {@code bucket4j-sim} is Bucket4j on the same simulated clock, the peer that meets the
 * same traffic at the same rates as {@code fcap-sim}.
 *
 * <p>{@code fcap-sim-verdicts} is {@code fcap-sim} deciding as an internal caller does (the replay):
 * {@code Engine.decideAt} with a {@code RuleVerdicts} callback, which builds no {@code Decision} and
 * answers the admission alone, as the peers do (their answer is a boolean); its engine gives no
 * releasable decision ids, which the peers have no counterpart of either.
 *
 * <p>{@code fcap-sim-durable} is {@code fcap-sim} on the durable store as {@code fcap serve} runs it
 * by default (journal in a temporary directory, fsync every second); {@code fcap-sim-fsync-each} forces
 * the journal before each decision is answered ({@code store.fsync: always}): with one thread, one
 * fsync per decision, its worst case.
 *
 * <p>{@code fcap-sim-local} is {@code fcap-sim} with the seed policy plus a send window and a cap per
 * local day in the recipient's zone ({@link LocalTimePolicy}), every message carrying a zone: the cost
 * of local time. It is not among the defaults; {@code -p impl=fcap-sim,fcap-sim-local} runs it beside
 * {@code fcap-sim}.
 *
 * <p>Run: {@code java -jar fcap-bench/target/fcap-bench.jar DecisionBenchmark} (see docs/benchmarks.md).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 5)
@Fork(value = 2, jvmArgsAppend = {"-Xms6g", "-Xmx6g", "-XX:+AlwaysPreTouch"})
public class DecisionBenchmark {
  static final int DECISIONS_PER_MS = 100;

  /** The implementation under test, with its state; one per fork. */
  @State(Scope.Benchmark)
  public static class Subject {
    @Param({"fcap-sim", "fcap-sim-verdicts", "fcap-sim-durable", "fcap-sim-fsync-each", "fcap", "bucket4j", "bucket4j-sim",
        "resilience4j", "guava", "sentinel"})
    public String impl;

    @Param({"2097152"})
    public int streamLength;

    Message[] stream;
    CapLimiter limiter;
    /** The simulated clock of {@code fcap-sim}, epoch ms; null otherwise. */
    AtomicLong simulatedMs;
    /** The state directory of a durable fcap; null otherwise. */
    Path stateDir;

    @Setup(Level.Trial)
    public void setUp() {
      stream = Workload.messages(streamLength);
      // an implementation named "-sim" runs on the simulated clock, which decide() advances
      simulatedMs = impl.contains("-sim") ? new AtomicLong(System.currentTimeMillis()) : null;
      limiter = switch (impl) {
        case "fcap-sim" -> new FcapLimiter(simulatedMs::get);
        case "fcap-sim-verdicts" -> FcapLimiter.verdicts(simulatedMs::get);
        case "fcap-sim-local" -> {
          for (int i = 0; i < stream.length; i++) {
            stream[i] = LocalTimePolicy.inZone(stream[i]);
          }
          yield FcapLimiter.localTime(simulatedMs::get);
        }
        case "fcap-sim-durable", "fcap-sim-fsync-each" -> {
          stateDir = tempDir();
          yield new FcapLimiter(simulatedMs::get, impl.endsWith("each") ? Durability.everyWrite(stateDir)
              : Durability.of(stateDir));
        }
        case "fcap" -> new FcapLimiter();
        case "bucket4j" -> new Bucket4jLimiter();
        case "bucket4j-sim" -> new Bucket4jLimiter(simulatedMs::get);
        case "resilience4j" -> new Resilience4jLimiter();
        case "guava" -> new GuavaLimiter();
        case "sentinel" -> new SentinelLimiter();
        default -> throw new IllegalArgumentException("unknown impl " + impl);
      };
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      limiter.close();
      if (stateDir != null) {
        try (Stream<Path> files = Files.walk(stateDir)) {
          for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
            Files.delete(p);
          }
        }
      }
    }

    private static Path tempDir() {
      try {
        return Files.createTempDirectory("fcap-bench-state");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** Where one thread is in the stream; threads start at evenly spaced offsets. */
  @State(Scope.Thread)
  public static class Cursor {
    int next;
    int mask;
    int sinceTick;

    @Setup(Level.Trial)
    public void setUp(Subject subject, ThreadParams threads) {
      if (Integer.bitCount(subject.streamLength) != 1) {
        throw new IllegalArgumentException("streamLength must be a power of two");
      }
      mask = subject.streamLength - 1;
      next = (int) ((long) subject.streamLength * threads.getThreadIndex() / threads.getThreadCount());
    }
  }

  /** Admitted and refused decisions, reported next to the throughput. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class Outcomes {
    public long admitted;
    public long refused;

    @Setup(Level.Iteration)
    public void clear() {
      admitted = 0;
      refused = 0;
    }
  }

  @Benchmark
  @Threads(1)
  public boolean decide1(Subject s, Cursor c, Outcomes o) {
    return decide(s, c, o);
  }

  @Benchmark
  @Threads(2)
  public boolean decide2(Subject s, Cursor c, Outcomes o) {
    return decide(s, c, o);
  }

  private static boolean decide(Subject s, Cursor c, Outcomes o) {
    Message m = s.stream[c.next];
    c.next = (c.next + 1) & c.mask;
    if (s.simulatedMs != null && ++c.sinceTick == DECISIONS_PER_MS) {
      c.sinceTick = 0;
      s.simulatedMs.incrementAndGet();
    }
    boolean allowed = s.limiter.tryAcquire(m);
    if (allowed) {
      o.admitted++;
    } else {
      o.refused++;
    }
    return allowed;
  }
}
