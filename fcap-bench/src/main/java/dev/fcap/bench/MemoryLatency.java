package dev.fcap.bench;

import java.util.SplittableRandom;

/**
 * The machine's memory floor under a decision: how long one read of a random line costs when it
 * depends on the one before (a chain: the table slot, then the record it points to), and when
 * several independent chains are followed at once (the reads then overlap). A decision of the
 * embedded store on a recipient among millions makes about three such dependent reads, so their
 * latency bounds how many decisions one thread makes one at a time, whatever the code around them.
 *
 * <p>An {@code int[]} of the given size holds one random cycle (Sattolo's shuffle, fixed seed), so
 * every step of a chain is a read the caches have not seen lately and the prefetchers cannot guess.
 * Prints ns per read for 1, 2, 4, 8 and 16 chains, in rounds (the first is warm-up for the JIT).
 *
 * <p>Run: {@code java -Xmx2g -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.MemoryLatency [megabytes] [reads] [rounds]}
 */
public final class MemoryLatency {
  private MemoryLatency() {}

  public static void main(String[] args) {
    int megabytes = args.length > 0 ? Integer.parseInt(args[0]) : 256;
    int reads = args.length > 1 ? Integer.parseInt(args[1]) : 4_000_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    int[] next = cycle(megabytes * (1 << 20) / Integer.BYTES, new SplittableRandom(1));
    for (int round = 0; round < rounds; round++) {
      for (int chains = 1; chains <= 16; chains *= 2) {
        long started = System.nanoTime();
        int end = follow(next, chains, reads / chains);
        double ns = (double) (System.nanoTime() - started) / (reads / chains * chains);
        System.out.printf("round %d, %d MB, %2d chains: %6.1f ns per read, %6.1f ns per step of a chain (%d)%n",
            round, megabytes, chains, ns, ns * chains, end & 1);
      }
    }
  }

  /** One cycle through every index: {@code next[i]} is the index read after {@code i}. */
  private static int[] cycle(int n, SplittableRandom random) {
    int[] next = new int[n];
    for (int i = 0; i < n; i++) {
      next[i] = i;
    }
    for (int i = n - 1; i > 0; i--) { // Sattolo: a single cycle, so no chain falls into a short loop
      int j = random.nextInt(i);
      int t = next[i];
      next[i] = next[j];
      next[j] = t;
    }
    return next;
  }

  /** Follows {@code chains} chains from evenly spaced starts, {@code steps} reads each, in turn. */
  private static int follow(int[] next, int chains, int steps) {
    int[] at = new int[chains];
    for (int c = 0; c < chains; c++) {
      at[c] = (int) ((long) c * next.length / chains);
    }
    for (int s = 0; s < steps; s++) {
      for (int c = 0; c < chains; c++) {
        at[c] = next[at[c]];
      }
    }
    int sum = 0;
    for (int a : at) {
      sum += a; // used, so the reads are not dropped
    }
    return sum;
  }
}
