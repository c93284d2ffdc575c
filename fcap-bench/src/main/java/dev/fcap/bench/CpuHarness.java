package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.store.memory.MemoryStore;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A deterministic companion to {@link DecisionBenchmark} for before/after comparisons of the engine
 * on a shared, noisy machine: the clock is simulated (it advances 1 ms every {@code perMs}
 * decisions, 100 by default: the platform's peak of 100,000 decisions/s), so every run does exactly
 * the same work, and the cost is read as this thread's CPU time and allocated bytes, which other
 * processes disturb far less than wall time.
 *
 * <p>Run: {@code java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.CpuHarness [decisions] [rounds] [perMs] [mode]}
 *
 * <p>{@code mode}: {@code decision} (the default: {@code decideNow(message)}, the synchronous caller's
 * path, releases by decision id on, as {@code fcap serve} has them), {@code future} (the same through
 * {@code decide(message).join()}, as {@code fcap serve} decides: the future's cost beside it),
 * {@code no-release} (the same with releases off, at the simulated time as a caller-supplied one:
 * {@code decideAt(message, now).join()}) and {@code verdicts} (that decision with no
 * {@link dev.fcap.model.Decision} built: {@link Engine#decideAt(Message, long, Engine.RuleVerdicts)},
 * as the replay decides). The last two differ only in the {@code Decision}, so
 * their allocation apart is what the {@code Decision} costs, and {@code verdicts} alone is what the
 * hot path allocates besides it. {@code batch}: the {@code decision} mode's messages, 16 at a time
 * through {@code decideAll} (the server's batch endpoint; the store reads each batch's partitions
 * together before deciding them, {@link MemoryStore#applyAll}). {@code local}: the {@code decision}
 * mode with the seed policy plus a send window and a cap per local day in the recipient's zone, every
 * message carrying a zone ({@link LocalTimePolicy}): beside {@code decision}, the cost of local time.
 */
public final class CpuHarness {
  private CpuHarness() {}

  public static void main(String[] args) {
    int decisions = args.length > 0 ? Integer.parseInt(args[0]) : 4_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int perMs = args.length > 2 ? Integer.parseInt(args[2]) : 100;
    String mode = args.length > 3 ? args[3] : "decision";
    if (!java.util.List.of("decision", "future", "no-release", "verdicts", "batch", "local").contains(mode)) {
      throw new IllegalArgumentException(
          "mode must be decision, future, no-release, verdicts, batch or local, got " + mode);
    }
    boolean localTime = mode.equals("local");
    boolean releases = mode.equals("decision") || mode.equals("future") || mode.equals("batch") || localTime;
    Message[] batch = new Message[MemoryStore.AHEAD];
    long[] verdicts = new long[1];
    Engine.RuleVerdicts count = (index, allowed, enforced) -> verdicts[0]++;
    Message[] stream = Workload.messages(Workload.DEFAULT_LENGTH);
    List<Policy> policies = SeedPolicy.load();
    if (localTime) {
      policies = List.of(LocalTimePolicy.of(policies.get(0)));
      for (int i = 0; i < stream.length; i++) {
        stream[i] = LocalTimePolicy.inZone(stream[i]);
      }
    }
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    for (int round = 0; round < rounds; round++) {
      AtomicLong clockMs = new AtomicLong(1_700_000_000_000L);
      MemoryStore store = MemoryStore.builder().clock(clockMs::get).build();
      Engine.Builder builder = Engine.builder(store).clock(clockMs::get).policies(policies);
      Engine engine = releases ? builder.build() : builder.callerTime(true).releaseHorizon(java.time.Duration.ZERO).build();
      long admitted = 0;
      long cpu0 = threads.getCurrentThreadCpuTime();
      long alloc0 = threads.getThreadAllocatedBytes(tid);
      for (int i = 0; i < decisions; i++) {
        if (i % perMs == 0) {
          clockMs.incrementAndGet();
          if (!releases) {
            store.advanceCallerTimeFloor(clockMs.get()); // as the replay does: the store may forget by it
          }
        }
        Message m = stream[i & (stream.length - 1)];
        if (mode.equals("batch")) {
          batch[i % batch.length] = m;
          if (i % batch.length == batch.length - 1) {
            for (var decision : engine.decideAll(java.util.Arrays.asList(batch), false)) {
              admitted += decision.join().allowed() ? 1 : 0;
            }
          }
          continue;
        }
        boolean allowed = switch (mode) {
          case "decision", "local" -> engine.decideNow(m).allowed();
          case "future" -> engine.decide(m).join().allowed();
          case "no-release" -> engine.decideAt(m, clockMs.get()).join().allowed();
          default -> engine.decideAt(m, clockMs.get(), count).join();
        };
        if (allowed) {
          admitted++;
        }
      }
      long cpu = threads.getCurrentThreadCpuTime() - cpu0;
      long alloc = threads.getThreadAllocatedBytes(tid) - alloc0;
      System.out.printf("round %d (%s): %.0f decisions/cpu-s, %.1f ns/decision, %.0f B/decision, admitted %.1f%%, %d partitions%n",
          round, mode, decisions * 1e9 / cpu, (double) cpu / decisions, (double) alloc / decisions,
          100.0 * admitted / decisions, store.size());
    }
  }
}
