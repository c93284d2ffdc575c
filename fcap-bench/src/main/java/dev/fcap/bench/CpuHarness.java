package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.store.memory.MemoryStore;
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A deterministic companion to {@link DecisionBenchmark} for before/after comparisons of the engine
 * on a shared, noisy machine: the clock is simulated (it advances 1 ms every {@code perMs}
 * decisions, 100 by default: the platform's peak of 100,000 decisions/s), so every run does exactly
 * the same work, and the cost is read as this thread's CPU time and allocated bytes, which other
 * processes disturb far less than wall time.
 *
 * <p>Run: {@code java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.CpuHarness [decisions] [rounds] [perMs]}
 */
public final class CpuHarness {
  private CpuHarness() {}

  public static void main(String[] args) {
    int decisions = args.length > 0 ? Integer.parseInt(args[0]) : 4_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int perMs = args.length > 2 ? Integer.parseInt(args[2]) : 100;
    Message[] stream = Workload.messages(Workload.DEFAULT_LENGTH);
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    for (int round = 0; round < rounds; round++) {
      AtomicLong clockMs = new AtomicLong(1_700_000_000_000L);
      MemoryStore store = MemoryStore.builder().clock(clockMs::get).build();
      Engine engine = Engine.builder(store).clock(clockMs::get).policies(SeedPolicy.load()).build();
      long admitted = 0;
      long cpu0 = threads.getCurrentThreadCpuTime();
      long alloc0 = threads.getThreadAllocatedBytes(tid);
      for (int i = 0; i < decisions; i++) {
        if (i % perMs == 0) {
          clockMs.incrementAndGet();
        }
        if (engine.decide(stream[i & (stream.length - 1)]).join().allowed()) {
          admitted++;
        }
      }
      long cpu = threads.getCurrentThreadCpuTime() - cpu0;
      long alloc = threads.getThreadAllocatedBytes(tid) - alloc0;
      System.out.printf("round %d: %.0f decisions/cpu-s, %.1f ns/decision, %.0f B/decision, admitted %.1f%%, %d partitions%n",
          round, decisions * 1e9 / cpu, (double) cpu / decisions, (double) alloc / decisions,
          100.0 * admitted / decisions, store.size());
    }
  }
}
