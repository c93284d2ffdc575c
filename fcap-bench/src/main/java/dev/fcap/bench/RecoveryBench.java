package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.store.memory.Durability;
import dev.fcap.store.memory.MemoryStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

/**
 * How long the durable embedded store takes to come back: N recipients, each with one message under
 * the seed policy (the store snapshots by itself while it fills, as in production), then (1) a start
 * from the files as the fill left them (the last snapshot plus the journal after it), and (2) a start
 * right after a fresh snapshot (the snapshot alone), each timed from {@code build()} to a store that
 * answers, with the state's size on disk. Not a JMH benchmark: a start happens once.
 *
 * <p>Run: {@code scripts/bench-durability}, or {@code java -Xmx12g -cp fcap-bench/target/fcap-bench.jar
 * dev.fcap.bench.RecoveryBench 1000000 10000000}
 */
public final class RecoveryBench {

  private RecoveryBench() {}

  public static void main(String[] args) throws Exception {
    for (String a : args.length == 0 ? new String[] {"1000000"} : args) {
      run(Integer.parseInt(a));
    }
  }

  private static void run(int recipients) throws Exception {
    Path dir = Files.createTempDirectory("fcap-recovery");
    try {
      long t0 = System.nanoTime();
      MemoryStore store = MemoryStore.builder().durable(Durability.of(dir)).build();
      Engine engine = Engine.builder(store).releaseHorizon(java.time.Duration.ZERO) // counters only: no release records to recover
          .policies(SeedPolicy.load()).build();
      CompletableFuture<?> last = null;
      for (int i = 0; i < recipients; i++) {
        last = engine.decide(Message.builder("+86138" + i).content("template " + (i & 63)).build());
      }
      last.join();
      store.close();
      long filled = System.nanoTime();
      report(recipients, "fill (decide + journal)", filled - t0, dir);

      MemoryStore fromJournal = timedStart(dir, recipients, "start (snapshot + journal)");
      String before = newestSnapshot(dir);
      fromJournal.requestSnapshot();
      long deadline = System.nanoTime() + 600_000_000_000L;
      while (newestSnapshot(dir).equals(before) && System.nanoTime() < deadline) {
        Thread.sleep(50); // polling for the snapshot file, bounded
      }
      fromJournal.close();

      MemoryStore fromSnapshot = timedStart(dir, recipients, "start (fresh snapshot)");
      fromSnapshot.close();
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
  }

  /** Opens the store in {@code dir}, timing its recovery, and checks that every recipient came back. */
  private static MemoryStore timedStart(Path dir, int recipients, String what) throws IOException {
    long started = System.nanoTime();
    MemoryStore store = MemoryStore.builder().durable(Durability.of(dir)).build();
    long opened = System.nanoTime();
    check(store, recipients);
    report(recipients, what, opened - started, dir);
    System.out.println("  " + store.recoveryReport().orElse(""));
    return store;
  }

  private static void check(MemoryStore store, int recipients) {
    if (store.size() != recipients) {
      throw new IllegalStateException("recovered " + store.size() + " partitions, expected " + recipients);
    }
  }

  private static String newestSnapshot(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".bin")).max(String::compareTo)
          .orElse("");
    }
  }

  private static void report(int recipients, String what, long nanos, Path dir) throws IOException {
    long bytes;
    try (Stream<Path> files = Files.list(dir)) {
      bytes = files.mapToLong(p -> p.toFile().length()).sum();
    }
    System.out.printf("%,d recipients: %-26s %,8d ms   state on disk %,d MB%n", recipients, what, nanos / 1_000_000,
        bytes >> 20);
  }
}
