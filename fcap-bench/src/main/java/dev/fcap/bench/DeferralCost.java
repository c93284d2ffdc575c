package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Defer;
import dev.fcap.model.Message;
import dev.fcap.store.memory.MemoryStore;
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a deferred decision that books costs beside an ordinary one, on the embedded store with the
 * seed policy, in this thread's CPU time and allocated bytes (a simulated clock: every run does the
 * same work). Each of {@code recipients} recipients gets 15 messages in one millisecond (the
 * per-minute limit; each admitted: the ordinary decision), then 10 more asking to be deferred, each
 * booked a minute after the one it waits for (the deferred decision, reading a log that holds the
 * bookings before it), then 5 plain ones (refused: a log with bookings read by a decision now).
 * Contents are distinct, so only the recipient's rules refuse.
 *
 * <p>With {@code sender} as the third argument, the policy also caps each sender at 200 a minute
 * ({@code key: [sender]}, a partition of its own) and every message names a sender of its own: each
 * decision spans two partitions, and a booking is found by the partition chain's rounds.
 *
 * <p>Run: {@code java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.DeferralCost [recipients] [rounds] [sender]}
 */
public final class DeferralCost {
  private DeferralCost() {}

  public static void main(String[] args) {
    int recipients = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    boolean perSender = args.length > 2 && args[2].equals("sender");
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    Message[][] phases = new Message[3][];
    int[] perRecipient = {SeedPolicy.PER_MINUTE, 10, 5};
    String[] names = {"admitted", "booked", "refused"};
    for (int p = 0; p < 3; p++) {
      phases[p] = new Message[recipients * perRecipient[p]];
      for (int r = 0; r < recipients; r++) {
        for (int k = 0; k < perRecipient[p]; k++) {
          Message.Builder b = Message.builder("+1555" + (1_000_000 + r)).content("offer " + p + "-" + k);
          Message m = (perSender ? b.sender("sender-" + r) : b).build();
          phases[p][r * perRecipient[p] + k] = p == 1 ? m.withDefer(Defer.BY_DEFAULT) : m;
        }
      }
    }
    for (int round = 0; round < rounds; round++) {
      AtomicLong clockMs = new AtomicLong(1_700_000_000_000L);
      MemoryStore store = MemoryStore.builder().clock(clockMs::get).build();
      Engine engine = Engine.builder(store).clock(clockMs::get).policies(perSender ? withPerSender() : SeedPolicy.load())
          .build();
      StringBuilder line = new StringBuilder("round " + round + ":");
      double[] ns = new double[3];
      for (int p = 0; p < 3; p++) {
        long outcome = 0;
        long cpu0 = threads.getCurrentThreadCpuTime();
        long alloc0 = threads.getThreadAllocatedBytes(tid);
        for (Message m : phases[p]) {
          var d = engine.decide(m).join();
          outcome += (p == 0 ? d.allowed() : p == 1 ? d.deferred() : !d.allowed() && !d.deferred()) ? 1 : 0;
        }
        long cpu = threads.getCurrentThreadCpuTime() - cpu0;
        long alloc = threads.getThreadAllocatedBytes(tid) - alloc0;
        if (outcome != phases[p].length) {
          throw new IllegalStateException(names[p] + ": " + outcome + " of " + phases[p].length + " as expected");
        }
        ns[p] = (double) cpu / phases[p].length;
        line.append(String.format(" %s %.1f ns %.0f B;", names[p], ns[p], (double) alloc / phases[p].length));
      }
      System.out.println(line + String.format(" booked/admitted %.2fx, refused/admitted %.2fx", ns[1] / ns[0],
          ns[2] / ns[0]));
      engine.close();
    }
  }

  /** The seed policy and a cap per sender, which no message of the run reaches. */
  private static java.util.List<dev.fcap.model.Policy> withPerSender() {
    dev.fcap.model.Policy seed = SeedPolicy.load().get(0);
    java.util.List<dev.fcap.model.Rule> rules = new java.util.ArrayList<>(seed.rules());
    rules.add(dev.fcap.model.Rule.of("per-sender", 200, java.time.Duration.ofMinutes(1),
        dev.fcap.model.Dimension.SENDER));
    return java.util.List.of(new dev.fcap.model.Policy(seed.tenant(), seed.version(), rules, seed.timeZone()));
  }
}
