package dev.fcap.cli;

import java.net.InetAddress;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fcap bench}: a bounded load generator against a running fcap server on this machine.
 *
 * <p>It keeps {@code --concurrency} requests in flight (closed loop) until {@code --duration} has
 * passed or {@code --requests} were sent, whichever comes first, after an unmeasured warm-up. Each
 * request's latency (send to complete answer) is kept, so percentiles are exact, not bucketed.
 * Recipients are drawn uniformly from {@code --recipients} ids and contents from 20 texts, so the
 * seed policy admits most messages and denies some. Loopback targets only.
 *
 * <p>This class holds the options and the rounds; {@link BenchRun} sends (closed or open loop),
 * {@link HttpBenchSender} and {@link GrpcBenchSender} build the requests, {@link BenchReport} prints.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Load a running fcap server (loopback only) over HTTP or gRPC and report decisions/s and latency.")
final class BenchCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;
  @Option(names = "--url", description = "server base URL (default ${DEFAULT-VALUE})", defaultValue = "http://127.0.0.1:8080")
  URI url;

  @Option(names = "--protocol", description = "http or grpc (default ${DEFAULT-VALUE})", defaultValue = "http")
  String protocol;

  @Option(names = "--batch", description = "messages per request; 1 = single decisions (default ${DEFAULT-VALUE})",
      defaultValue = "1")
  int batch;

  @Option(names = "--concurrency", description = "requests in flight (default ${DEFAULT-VALUE})", defaultValue = "64")
  int concurrency;

  @Option(names = "--rate", description = "requests per second, sent at their scheduled instants whatever the "
      + "answers (open loop; --concurrency caps those in flight); latency is counted from each request's scheduled "
      + "instant. Default: closed loop, --concurrency requests in flight")
  Double rate;

  @Option(names = "--duration", description = "measured time, e.g. 10s (default ${DEFAULT-VALUE})", defaultValue = "10s")
  String duration;

  @Option(names = "--warmup", description = "unmeasured time first (default ${DEFAULT-VALUE})", defaultValue = "3s")
  String warmup;

  @Option(names = "--requests", description = "at most this many measured requests (default ${DEFAULT-VALUE})",
      defaultValue = "2000000")
  int maxRequests;

  @Option(names = "--recipients", description = "distinct recipients (default ${DEFAULT-VALUE})", defaultValue = "1000000")
  int recipients;

  @Option(names = "--tenant", description = "tenant of the messages (default ${DEFAULT-VALUE})", defaultValue = "default")
  String tenant;

  @Option(names = "--api-key", description = "API key, if the server has keys (default: $FCAP_API_KEY)")
  String apiKey;

  @Option(names = "--dry-run", description = "send checks instead of decisions")
  boolean dryRun;

  @Option(names = "--baseline", description = "send GET /health instead of decisions: the HTTP floor of this "
      + "machine and load generator, to compare decision figures with")
  boolean baseline;

  @Option(names = "--server-pid", description = "the server's process id: report its CPU time per decision "
      + "(from /proc), a figure that holds even when other processes share the cores")
  Integer serverPid;

  @Option(names = "--rounds", description = "measured rounds after the warm-up, in this JVM (default ${DEFAULT-VALUE}); "
      + "later rounds run with a warmed-up load generator", defaultValue = "1")
  int rounds;

  @Option(names = "--seed", description = "random seed of the workload (default: a new one per run)")
  Long seed;

  @Option(names = "--connections", description = "client connections (event loops) to the server (default "
      + "${DEFAULT-VALUE}); HTTP/2 multiplexes the in-flight requests over them", defaultValue = "4")
  int connections;

  @Override
  public Integer call() throws Exception {
    if (url.getScheme() == null || !url.getScheme().matches("(?i)https?") || url.getHost() == null) {
      throw CliException.usage("--url " + url + " is not an http:// or https:// URL with a host; give one such as "
          + "http://127.0.0.1:8080");
    }
    if (url.getPort() == 0 || url.getPort() > 65535) {
      throw CliException.usage("--url " + url + ": port " + url.getPort() + " is out of range; a port is 1 to 65535");
    }
    if (!loopback(url.getHost())) {
      spec.commandLine().getErr().println("fcap bench: only loopback targets are allowed (got " + url.getHost() + ")");
      return 2;
    }
    if (batch < 1 || batch > 10_000 || concurrency < 1 || concurrency > 4096 || recipients < 1 || rounds < 1
        || rounds > 100 || connections < 1 || connections > 64) {
      spec.commandLine().getErr().println("fcap bench: --batch must be 1-10000, --concurrency 1-4096, --rounds 1-100, "
          + "--connections 1-64, --recipients positive");
      return 2;
    }
    if (rate != null && !(rate >= 1 && rate <= 10_000_000)) {
      spec.commandLine().getErr().println("fcap bench: --rate must be 1 to 10000000 requests per second (got " + rate
          + ")");
      return 2;
    }
    long warmupMs = ms("--warmup", warmup);
    long durationMs = ms("--duration", duration);
    if (serverPid != null && !java.nio.file.Files.isReadable(java.nio.file.Path.of("/proc/" + serverPid + "/stat"))) {
      throw CliException.usage("--server-pid " + serverPid + ": no such process (/proc/" + serverPid
          + "/stat cannot be read); give the running server's process id");
    }
    if (apiKey == null) {
      apiKey = System.getenv("FCAP_API_KEY");
    }
    BenchSender sender = BenchSender.of(this);
    if (sender == null) {
      spec.commandLine().getErr().println("fcap bench: --protocol must be http or grpc");
      return 2;
    }
    long base = seed != null ? seed : System.nanoTime();
    BenchRun runs = new BenchRun(this, spec.commandLine().getErr());
    runs.run(sender, warmupMs, Integer.MAX_VALUE, null, base);
    long[] latencies = new long[maxRequests];
    boolean valid = true;
    for (int round = 1; round <= rounds; round++) {
      long serverCpu0 = serverCpuNanos();
      long ownCpu0 = ownCpuNanos();
      BenchRun.Result r = runs.run(sender, durationMs, maxRequests, latencies, base + round);
      r.serverCpu = serverCpu0 < 0 ? -1 : serverCpuNanos() - serverCpu0;
      r.ownCpu = ownCpuNanos() - ownCpu0;
      if (rounds > 1) {
        out().printf("round %d of %d%n", round, rounds);
      }
      valid &= BenchReport.print(this, r, latencies, out());
    }
    return valid ? 0 : 1;
  }

  private static long ms(String option, String text) {
    java.util.Optional<Duration> d;
    try {
      d = dev.fcap.policy.Durations.parse(text);
    } catch (ArithmeticException | NumberFormatException e) {
      d = java.util.Optional.empty(); // a number too large for a duration
    }
    return d.map(Duration::toMillis).orElseThrow(() -> CliException.usage(option + " '" + text
        + "' is not a duration; give one such as 500ms, 10s, 1m or 1h30m"));
  }

  /** Whether {@code host} is a loopback address; one that does not resolve is a usage error. */
  private static boolean loopback(String host) {
    try {
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      throw CliException.usage("--url: host " + host + " is unknown; bench targets loopback only, e.g. "
          + "http://127.0.0.1:8080");
    }
  }

  /** CPU time (user + system) of the server process, from /proc; -1 without --server-pid. */
  private long serverCpuNanos() {
    if (serverPid == null) {
      return -1;
    }
    try {
      String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + serverPid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
      return ticks * 10_000_000L; // USER_HZ is 100 on Linux
    } catch (java.io.IOException | RuntimeException e) {
      throw CliException.failed("cannot read the CPU time of --server-pid " + serverPid + " (has it exited?): "
          + e.getMessage());
    }
  }

  private static long ownCpuNanos() {
    var os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
  }

  private java.io.PrintWriter out() {
    return spec.commandLine().getOut();
  }
}
