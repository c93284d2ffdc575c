package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.memory.MemoryStore;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Whether a decision's cost depends on how many decisions its partition remembers: every decision
 * goes to one channel-wide partition ({@code key: [channel]}, limit 10^6 per hour, all admitted), so
 * with release records on (the default horizon, 1 h here) the partition remembers every one of them.
 * Prints this thread's CPU time per decision for each block of decisions, records off and on, on the
 * embedded store (Redis: {@code redis.SharedPartitionProfile}, which reads the script's own time).
 * Flat blocks: the cost does not grow with what the partition remembers.
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.SharedPartitionCost [--decisions N] [--block B]
 * </pre>
 */
public final class SharedPartitionCost {
  private static final String POLICY = """
      policies:
        - tenant: default
          rules:
            - {id: channel-per-hour, limit: 1000000, window: 1h, key: [channel]}
      """;

  private SharedPartitionCost() {}

  public static void main(String[] args) {
    int decisions = 100_000;
    int block = 10_000;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--decisions" -> decisions = Integer.parseInt(args[i + 1]);
        case "--block" -> block = Integer.parseInt(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + " (--decisions N, --block B)");
      }
    }
    for (boolean on : new boolean[] {false, true}) {
      run(decisions, Math.min(block, decisions), on);
    }
  }

  private static void run(int n, int block, boolean on) {
    AtomicLong now = new AtomicLong(1_767_225_600_000L);
    MemoryStore store = MemoryStore.builder().clock(now::get).build();
    Engine.Builder b = Engine.builder(store).clock(now::get).policies(PolicyParser.parse(POLICY));
    if (!on) {
      b.releaseHorizon(Duration.ZERO);
    }
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    try (Engine engine = b.build()) {
      long cpu = threads.getCurrentThreadCpuTime();
      long wall = System.nanoTime();
      for (int i = 1; i <= n; i++) {
        // 10 decisions per ms: the whole run stays inside one window and one horizon
        if (i % 10 == 0) {
          now.incrementAndGet();
        }
        if (!engine.decide(Message.builder("+1555" + (i % 100_000)).channel("sms").build()).join().allowed()) {
          throw new IllegalStateException("decision " + i + " refused: the rule admits every one");
        }
        if (i % block == 0) {
          long c = threads.getCurrentThreadCpuTime();
          long w = System.nanoTime();
          System.out.printf("embedded records %-3s decisions %,9d: %8.2f us CPU, %8.2f us wall per decision%n",
              on ? "on" : "off", i, (c - cpu) / 1e3 / block, (w - wall) / 1e3 / block);
          cpu = c;
          wall = w;
        }
      }
    }
  }
}
