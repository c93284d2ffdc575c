package dev.fcap.cli;

import java.io.PrintWriter;
import java.util.Arrays;
import java.util.Locale;

/**
 * What {@code fcap bench} prints of a run: rates, exact latency percentiles, the generator's
 * lateness, CPU times, and whether the run is a valid throughput figure.
 */
final class BenchReport {
  private BenchReport() {}

  /**
   * Prints one run; true if it is a valid throughput figure: no request failed, no item was refused
   * and no decision was degraded (a degraded decision was made by the failure policy, not the store,
   * so it measures the fallback, not fcap).
   */
  static boolean print(BenchCommand o, BenchRun.Result r, long[] latencies, PrintWriter out) {
    int n = Math.min(r.done.get(), latencies.length);
    long[] l = Arrays.copyOf(latencies, n);
    Arrays.sort(l);
    double secs = r.nanos / 1e9;
    out.printf("fcap bench: %s%s, batch %d, %s, connections %d, %d recipients%n", o.protocol,
        o.baseline ? " (baseline: GET /health)" : "", o.batch, o.rate == null ? "concurrency " + o.concurrency
            : String.format(Locale.ROOT, "open loop at %.0f requests/s, at most %d in flight", o.rate,
                o.concurrency), o.connections, o.recipients);
    out.printf("  requests     %,d in %.1f s = %,.0f requests/s%n", r.done.get(), secs, r.done.get() / secs);
    out.printf("  decisions    %,d = %,.0f decisions/s (%.1f%% allowed)%n", r.decisions.get(),
        r.decisions.get() / secs, 100.0 * r.allowed.get() / Math.max(1, r.decisions.get()));
    if (n > 0) {
      out.printf("  latency ms   p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f%n", pct(l, 0.50),
          pct(l, 0.90), pct(l, 0.99), pct(l, 0.999), l[n - 1] / 1e6);
    }
    if (r.lateness != null && r.lateness.length > 0) {
      long[] late = r.lateness.clone();
      Arrays.sort(late);
      long over = Arrays.stream(late).filter(t -> t > 1_000_000).count();
      out.printf("  generator    %.2f%% of requests sent > 1 ms after their instant; lateness p99 %.3f ms, max %.3f ms%n",
          100.0 * over / late.length, pct(late, 0.99), late[late.length - 1] / 1e6);
    }
    if (r.serverCpu >= 0) {
      out.printf("  server CPU   %.1f s = %.1f cores; %.1f us per request, %.2f us per decision%n", r.serverCpu / 1e9,
          r.serverCpu / (double) r.nanos, r.serverCpu / 1e3 / Math.max(1, r.done.get()),
          r.serverCpu / 1e3 / Math.max(1, r.decisions.get()));
    }
    out.printf("  client CPU   %.1f s; %.1f us per request%n", r.ownCpu / 1e9, r.ownCpu / 1e3 / Math.max(1,
        r.done.get()));
    out.printf("  degraded     %,d decisions (made by the failure policy, not the store)%n", r.degraded.get());
    out.printf("  errors       %d requests, %,d batch items%s%n", r.errors.get(), r.itemErrors.get(),
        r.firstError == null ? "" : " (first: " + r.firstError + ")");
    boolean valid = r.errors.get() == 0 && r.itemErrors.get() == 0 && r.degraded.get() == 0;
    out.printf("  verdict      %s%n", valid ? "valid throughput figure"
        : "NOT a valid throughput figure: the run had degraded decisions or errors");
    return valid;
  }

  private static double pct(long[] sorted, double p) {
    return sorted[(int) Math.min(sorted.length - 1, Math.floor(p * sorted.length))] / 1e6;
  }
}
