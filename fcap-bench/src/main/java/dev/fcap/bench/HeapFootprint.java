package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.store.memory.MemoryStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Heap bytes per recipient of the seed policy in the MemoryStore: fills N recipients with the same
 * timeline of messages on a simulated clock, then divides the retained heap (used heap after full
 * GCs, minus the same before the fill) by N, and cross-checks with {@link MemoryStore#bytes()}.
 * "Everything included": the records, the tables' slots at their real load, array headers and
 * padding. Not included: the engine's release ledger, a fixed ring (65,536 decisions by default)
 * whatever the number of recipients, which is disabled here so it does not pollute the division.
 *
 * <p>Timelines (every recipient gets the same one; the measurement is taken right after the last
 * message, when the most counters are live):
 * <ul>
 *   <li>{@code worst-distinct}: 50 messages in the last 24 h, 15 of them in the last minute and the
 *       other 35 in the 58 minutes before (so every content counter, which lives 59 min, is still
 *       live), all 50 contents distinct: one 50-entry log and 50 one-entry content logs.
 *   <li>{@code worst-distinct-day}: the same 50 messages but the 35 earlier ones spread over the
 *       rest of the 24 h: content counters older than 59 min have expired and are gone.
 *   <li>{@code worst-repeated}: 50 messages timed like {@code worst-distinct}, contents cycling
 *       through 10 templates (each sent 5 times, at most 2 in any 59 s): 10 five-entry content logs.
 *   <li>{@code typical}: 10 messages a day, one every 2.4 h, 9 distinct contents (one sent twice).
 *   <li>{@code worst-no-content}, {@code typical-no-content}: the same times without content, so
 *       only the two recipient rules apply (one shared 15/1m + 50/24h log): the state the Redis
 *       section of docs/benchmarks.md measures.
 * </ul>
 *
 * <p>Run: {@code java -Xmx8g -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.HeapFootprint [N] [--releases] [scenario...]}
 * ({@code --releases}: releases by decision id on, the default horizon; off by default, as before)
 */
public final class HeapFootprint {
  private static final long HOUR = 3_600_000L;
  private static final long MINUTE = 60_000L;

  private HeapFootprint() {}

  /** One message of a timeline: when, relative to the end, and which content. */
  private record Event(long beforeEndMs, String content) {}

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    List<String> rest = new ArrayList<>(args.length > 1 ? List.of(args).subList(1, args.length) : List.of());
    boolean releases = rest.remove("--releases"); // releases by decision id on (the default horizon)
    List<String> scenarios = !rest.isEmpty() ? rest
        : List.of("worst-distinct", "worst-distinct-day", "worst-repeated", "typical", "worst-no-content",
            "typical-no-content");
    System.out.printf("recipients per run: %,d; heap max %,d MB; releases by decision id %s%n", n,
        Runtime.getRuntime().maxMemory() >> 20, releases ? "on" : "off");
    for (String scenario : scenarios) {
      measure(scenario, timeline(scenario), n, releases);
    }
  }

  private static List<Event> timeline(String scenario) {
    List<Event> events = new ArrayList<>();
    switch (scenario) {
      case "worst-distinct", "worst-repeated" -> {
        for (int i = 0; i < 35; i++) {
          events.add(new Event(59 * MINUTE - 1 - i * (58 * MINUTE / 35), null));
        }
        for (int i = 0; i < 15; i++) {
          events.add(new Event(MINUTE - 1 - i * (MINUTE / 16), null));
        }
      }
      case "worst-distinct-day", "worst-no-content" -> {
        for (int i = 0; i < 35; i++) {
          events.add(new Event(24 * HOUR - 1 - i * ((24 * HOUR - 2 * MINUTE) / 35), null));
        }
        for (int i = 0; i < 15; i++) {
          events.add(new Event(MINUTE - 1 - i * (MINUTE / 16), null));
        }
      }
      case "typical", "typical-no-content" -> {
        for (int i = 0; i < 10; i++) {
          events.add(new Event(24 * HOUR - 1 - i * (24 * HOUR / 10), null));
        }
      }
      default -> throw new IllegalArgumentException("unknown scenario " + scenario);
    }
    List<Event> withContent = new ArrayList<>();
    for (int i = 0; i < events.size(); i++) {
      String content = switch (scenario) {
        case "worst-repeated" -> Workload.template(i % 10);
        case "typical" -> i == 9 ? Workload.template(0) : i == 0 ? Workload.template(0) : null;
        default -> null;
      };
      withContent.add(new Event(events.get(i).beforeEndMs(), content));
    }
    return withContent;
  }

  private static void measure(String scenario, List<Event> events, int n, boolean releases) {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long before = usedAfterGc(memory);
    long end = 1_700_000_000_000L;
    AtomicLong clock = new AtomicLong();
    MemoryStore store = MemoryStore.builder().clock(clock::get).maxBytes(Long.MAX_VALUE / 2).build();
    Engine.Builder b = Engine.builder(store).clock(clock::get).policies(SeedPolicy.load());
    Engine engine = (releases ? b : b.releaseHorizon(java.time.Duration.ZERO)).build();
    long refused = 0;
    for (int e = 0; e < events.size(); e++) {
      Event event = events.get(e);
      clock.set(end - event.beforeEndMs());
      for (int r = 0; r < n; r++) {
        // A distinct content per (recipient, event) unless the timeline names a template.
        String content = event.content() != null ? event.content()
            : "Message " + e + " for recipient " + r + ": your personal offer code is " + (1_000_000 + r);
        Message m = Message.builder(Workload.recipientId(r)).content(scenario.endsWith("no-content") ? null : content)
            .build();
        if (!engine.decide(m).join().allowed()) {
          refused++;
        }
      }
    }
    clock.set(end);
    long after = usedAfterGc(memory);
    double heapPerRecipient = (double) (after - before) / n;
    double storePerRecipient = (double) store.bytes() / n;
    System.out.printf("%-20s %2d msgs/recipient, refused %d: heap delta %.1f B/recipient, MemoryStore.bytes() %.1f "
        + "B/recipient, partitions %,d%n", scenario, events.size(), refused, heapPerRecipient, storePerRecipient,
        store.size());
    if (store.size() < 0) {
      System.out.println(engine); // keep the engine reachable until after the measurement
    }
  }

  private static long usedAfterGc(MemoryMXBean memory) {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
    }
    return used;
  }
}
