package dev.fcap.cli;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.client.grpc.GrpcClients;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import dev.fcap.server.grpc.v1.BatchReply;
import dev.fcap.server.grpc.v1.BatchRequest;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceStub;
import dev.fcap.server.grpc.v1.Message;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
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

  private ClientFactory factory() {
    return ClientFactory.builder().maxNumEventLoopsPerEndpoint(connections).maxNumEventLoopsPerHttp1Endpoint(connections)
        .build();
  }

  @Override
  public Integer call() throws Exception {
    if (url.getHost() == null || !InetAddress.getByName(url.getHost()).isLoopbackAddress()) {
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
    if (apiKey == null) {
      apiKey = System.getenv("FCAP_API_KEY");
    }
    long warmupMs = ms(warmup);
    long durationMs = ms(duration);
    Sender sender = protocol.equals("grpc") ? new GrpcSender() : protocol.equals("http") ? new HttpSender() : null;
    if (sender == null) {
      spec.commandLine().getErr().println("fcap bench: --protocol must be http or grpc");
      return 2;
    }
    long base = seed != null ? seed : System.nanoTime();
    run(sender, warmupMs, Integer.MAX_VALUE, null, base);
    long[] latencies = new long[maxRequests];
    boolean valid = true;
    for (int round = 1; round <= rounds; round++) {
      long serverCpu0 = serverCpuNanos();
      long ownCpu0 = ownCpuNanos();
      Result r = run(sender, durationMs, maxRequests, latencies, base + round);
      r.serverCpu = serverCpu0 < 0 ? -1 : serverCpuNanos() - serverCpu0;
      r.ownCpu = ownCpuNanos() - ownCpu0;
      if (rounds > 1) {
        out().printf("round %d of %d%n", round, rounds);
      }
      valid &= report(r, latencies);
    }
    return valid ? 0 : 1;
  }

  private static long ms(String text) {
    return dev.fcap.policy.Durations.parse(text).map(Duration::toMillis)
        .orElseThrow(() -> new IllegalArgumentException("not a duration: " + text));
  }

  /** Counts of one run. */
  private static final class Result {
    final AtomicInteger sent = new AtomicInteger();
    final AtomicInteger done = new AtomicInteger();
    final AtomicLong decisions = new AtomicLong();
    final AtomicLong allowed = new AtomicLong();
    final AtomicInteger errors = new AtomicInteger();
    final AtomicLong degraded = new AtomicLong();
    final AtomicLong itemErrors = new AtomicLong();
    volatile String firstError;
    /** Open loop: how late each request was sent after its scheduled instant (ns); null in closed loop. */
    long[] lateness;
    long nanos;
    long serverCpu = -1;
    long ownCpu;
  }

  /**
   * What one request came back with: admitted, degraded (decided by the failure policy, not the
   * store) and refused items (a batch item with its own error); or the request's error.
   */
  record Reply(int allowed, int degraded, int itemErrors, String error) {
    static Reply failed(String error) {
      return new Reply(0, 0, 0, error);
    }
  }

  /** Sends one request of {@code batch} messages; calls back with what came back. */
  interface Sender {
    void send(SplittableRandom rnd, Consumer<Reply> done);
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
      throw new IllegalArgumentException("cannot read the CPU time of process " + serverPid + ": " + e.getMessage());
    }
  }

  private static long ownCpuNanos() {
    var os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
  }

  private Result run(Sender sender, long durationMs, int limit, long[] latencies, long seedBase)
      throws InterruptedException {
    if (rate != null) {
      return paced(sender, durationMs, limit, latencies, seedBase);
    }
    Result r = new Result();
    long start = System.nanoTime();
    long deadline = start + TimeUnit.MILLISECONDS.toNanos(durationMs);
    CountDownLatch finished = new CountDownLatch(concurrency);
    for (int c = 0; c < concurrency; c++) {
      SplittableRandom rnd = new SplittableRandom(seedBase * 31 + c);
      next(sender, r, rnd, deadline, limit, latencies, finished);
    }
    if (!finished.await(durationMs + 60_000, TimeUnit.MILLISECONDS)) {
      spec.commandLine().getErr().println("fcap bench: requests still outstanding after the run; stopping");
    }
    r.nanos = System.nanoTime() - start;
    return r;
  }

  /**
   * Open loop: one pacing thread sends request i at {@code start + i / rate}, without waiting for
   * earlier answers, so a slow answer cannot delay the requests after it (closed loop, a slow answer
   * holds its slot, and the requests it delays are never sent: coordinated omission). A request is
   * sent late only when {@code --concurrency} are in flight or the pacing thread got no CPU; its
   * lateness is recorded, and its latency counts from its scheduled instant.
   */
  private Result paced(Sender sender, long durationMs, int limit, long[] latencies, long seedBase)
      throws InterruptedException {
    Result r = new Result();
    long interval = Math.max(1, (long) (1e9 / rate));
    // the warm-up has no request limit of its own: --requests bounds it too (one lateness slot per request)
    int planned = (int) Math.min(Math.min(limit, maxRequests), durationMs * 1_000_000 / interval);
    r.lateness = new long[planned];
    Semaphore inFlight = new Semaphore(concurrency);
    SplittableRandom rnd = new SplittableRandom(seedBase * 31);
    long start = System.nanoTime();
    for (int i = 0; i < planned; i++) {
      long at = start + i * interval;
      long wait;
      while ((wait = at - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait > 200_000 ? wait - 100_000 : Math.max(1, wait / 2));
      }
      inFlight.acquire();
      r.lateness[i] = System.nanoTime() - at;
      int slot = i;
      r.sent.incrementAndGet();
      sender.send(rnd, reply -> {
        if (latencies != null && slot < latencies.length) {
          latencies[slot] = System.nanoTime() - at;
        }
        count(r, reply);
        inFlight.release();
      });
    }
    if (!inFlight.tryAcquire(concurrency, 60, TimeUnit.SECONDS)) {
      spec.commandLine().getErr().println("fcap bench: requests still outstanding after the run; stopping");
    }
    r.nanos = System.nanoTime() - start;
    return r;
  }

  private void count(Result r, Reply reply) {
    r.done.incrementAndGet();
    if (reply.error() != null) {
      r.errors.incrementAndGet();
      if (r.firstError == null) {
        r.firstError = reply.error();
      }
    } else {
      r.decisions.addAndGet(batch - reply.itemErrors());
      r.allowed.addAndGet(reply.allowed());
      r.degraded.addAndGet(reply.degraded());
      r.itemErrors.addAndGet(reply.itemErrors());
    }
  }

  private void next(Sender sender, Result r, SplittableRandom rnd, long deadline, int limit, long[] latencies,
      CountDownLatch finished) {
    int slot = r.sent.getAndIncrement();
    if (slot >= limit || System.nanoTime() >= deadline) {
      finished.countDown();
      return;
    }
    long t0 = System.nanoTime();
    sender.send(rnd, reply -> {
      long t = System.nanoTime() - t0;
      if (latencies != null) {
        latencies[slot] = t;
      }
      count(r, reply);
      next(sender, r, rnd, deadline, limit, latencies, finished);
    });
  }

  /**
   * Prints one run; true if it is a valid throughput figure: no request failed, no item was refused
   * and no decision was degraded (a degraded decision was made by the failure policy, not the store,
   * so it measures the fallback, not fcap).
   */
  private boolean report(Result r, long[] latencies) {
    int n = Math.min(r.done.get(), latencies.length);
    long[] l = Arrays.copyOf(latencies, n);
    Arrays.sort(l);
    double secs = r.nanos / 1e9;
    out().printf("fcap bench: %s%s, batch %d, %s, connections %d, %d recipients%n", protocol,
        baseline ? " (baseline: GET /health)" : "", batch, rate == null ? "concurrency " + concurrency
            : String.format(java.util.Locale.ROOT, "open loop at %.0f requests/s, at most %d in flight", rate,
                concurrency), connections, recipients);
    out().printf("  requests     %,d in %.1f s = %,.0f requests/s%n", r.done.get(), secs, r.done.get() / secs);
    out().printf("  decisions    %,d = %,.0f decisions/s (%.1f%% allowed)%n", r.decisions.get(),
        r.decisions.get() / secs, 100.0 * r.allowed.get() / Math.max(1, r.decisions.get()));
    if (n > 0) {
      out().printf("  latency ms   p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f%n", pct(l, 0.50),
          pct(l, 0.90), pct(l, 0.99), pct(l, 0.999), l[n - 1] / 1e6);
    }
    if (r.lateness != null && r.lateness.length > 0) {
      long[] late = r.lateness.clone();
      Arrays.sort(late);
      long over = Arrays.stream(late).filter(t -> t > 1_000_000).count();
      out().printf("  generator    %.2f%% of requests sent > 1 ms after their instant; lateness p99 %.3f ms, max %.3f ms%n",
          100.0 * over / late.length, pct(late, 0.99), late[late.length - 1] / 1e6);
    }
    if (r.serverCpu >= 0) {
      out().printf("  server CPU   %.1f s = %.1f cores; %.1f us per request, %.2f us per decision%n", r.serverCpu / 1e9,
          r.serverCpu / (double) r.nanos, r.serverCpu / 1e3 / Math.max(1, r.done.get()),
          r.serverCpu / 1e3 / Math.max(1, r.decisions.get()));
    }
    out().printf("  client CPU   %.1f s; %.1f us per request%n", r.ownCpu / 1e9, r.ownCpu / 1e3 / Math.max(1,
        r.done.get()));
    out().printf("  degraded     %,d decisions (made by the failure policy, not the store)%n", r.degraded.get());
    out().printf("  errors       %d requests, %,d batch items%s%n", r.errors.get(), r.itemErrors.get(),
        r.firstError == null ? "" : " (first: " + r.firstError + ")");
    boolean valid = r.errors.get() == 0 && r.itemErrors.get() == 0 && r.degraded.get() == 0;
    out().printf("  verdict      %s%n", valid ? "valid throughput figure"
        : "NOT a valid throughput figure: the run had degraded decisions or errors");
    return valid;
  }

  private java.io.PrintWriter out() {
    return spec.commandLine().getOut();
  }

  private static double pct(long[] sorted, double p) {
    return sorted[(int) Math.min(sorted.length - 1, Math.floor(p * sorted.length))] / 1e6;
  }

  private String recipient(SplittableRandom rnd) {
    return "+86" + (13_000_000_000L + rnd.nextInt(recipients));
  }

  private static String content(SplittableRandom rnd) {
    return "Your verification code is " + (1000 + rnd.nextInt(20));
  }

  private final class HttpSender implements Sender {
    private final WebClient client = WebClient.builder(url).factory(factory()).maxResponseLength(64L << 20)
        .responseTimeout(Duration.ofSeconds(30)).build();
    private final String path = batch == 1 ? "/v1/decisions" : "/v1/decisions/batch";

    @Override
    public void send(SplittableRandom rnd, Consumer<Reply> done) {
      if (baseline) {
        client.get("/health").aggregate().whenComplete((res, error) -> done.accept(
            error != null ? Reply.failed(error.toString()) : res.status().code() != 200
                ? Reply.failed("HTTP " + res.status().code()) : new Reply(1, 0, 0, null)));
        return;
      }
      StringBuilder b = new StringBuilder(batch * 96);
      if (batch == 1) {
        message(b, rnd, dryRun);
      } else {
        b.append("{\"dryRun\":").append(dryRun).append(",\"requests\":[");
        for (int i = 0; i < batch; i++) {
          if (i > 0) {
            b.append(',');
          }
          message(b, rnd, false);
        }
        b.append("]}");
      }
      var h = RequestHeaders.builder(HttpMethod.POST, path).contentType(MediaType.JSON_UTF_8);
      if (apiKey != null) {
        h.add("authorization", "Bearer " + apiKey);
      }
      CompletableFuture<AggregatedHttpResponse> f = client.execute(HttpRequest.of(h.build(),
          com.linecorp.armeria.common.HttpData.ofUtf8(b.toString()))).aggregate();
      f.whenComplete((res, error) -> {
        if (error != null) {
          done.accept(Reply.failed(error.toString()));
          return;
        }
        String body = res.contentUtf8();
        if (res.status().code() != 200) {
          done.accept(Reply.failed("HTTP " + res.status().code() + " " + body.substring(0, Math.min(200,
              body.length()))));
          return;
        }
        // a decision object starts with "allowed"; a rule outcome starts with "id"; a refused item is an error
        done.accept(new Reply(count(body, "{\"allowed\":true"), count(body, "\"degraded\":true"),
            count(body, "{\"error\":"), null));
      });
    }

    private void message(StringBuilder b, SplittableRandom rnd, boolean dry) {
      b.append("{\"tenant\":\"").append(tenant).append("\",\"recipient\":\"").append(recipient(rnd))
          .append("\",\"content\":\"").append(content(rnd)).append('"');
      if (dry) {
        b.append(",\"dryRun\":true");
      }
      b.append('}');
    }
  }

  private static int count(String s, String what) {
    int n = 0;
    for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + what.length())) {
      n++;
    }
    return n;
  }

  private final class GrpcSender implements Sender {
    private final FcapServiceStub stub;

    GrpcSender() {
      var b = GrpcClients.builder(url).factory(factory()).maxResponseLength(64L << 20).responseTimeout(Duration.ofSeconds(30));
      if (apiKey != null) {
        b.addHeader("authorization", "Bearer " + apiKey);
      }
      stub = b.build(FcapServiceStub.class);
    }

    private Message message(SplittableRandom rnd) {
      return Message.newBuilder().setTenant(tenant).setRecipient(recipient(rnd)).setContent(content(rnd)).build();
    }

    @Override
    public void send(SplittableRandom rnd, Consumer<Reply> done) {
      if (batch == 1) {
        stub.decide(DecideRequest.newBuilder().setMessage(message(rnd)).setDryRun(dryRun).build(),
            observer(d -> new Reply(d.getAllowed() ? 1 : 0, d.getDegraded() ? 1 : 0, 0, null), done));
      } else {
        BatchRequest.Builder b = BatchRequest.newBuilder().setDryRun(dryRun);
        for (int i = 0; i < batch; i++) {
          b.addRequests(message(rnd));
        }
        stub.decideBatch(b.build(), observer((BatchReply r) -> {
          int allowed = 0;
          int degraded = 0;
          int refused = 0;
          for (var x : r.getResultsList()) {
            if (!x.hasDecision()) {
              refused++;
            } else {
              allowed += x.getDecision().getAllowed() ? 1 : 0;
              degraded += x.getDecision().getDegraded() ? 1 : 0;
            }
          }
          return new Reply(allowed, degraded, refused, null);
        }, done));
      }
    }

    private <T> StreamObserver<T> observer(java.util.function.Function<T, Reply> read, Consumer<Reply> done) {
      return new StreamObserver<>() {
        private Reply value = Reply.failed("no reply");

        @Override
        public void onNext(T reply) {
          value = read.apply(reply);
        }

        @Override
        public void onError(Throwable t) {
          done.accept(Reply.failed(t.toString()));
        }

        @Override
        public void onCompleted() {
          done.accept(value);
        }
      };
    }
  }

}
