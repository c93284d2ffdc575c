package dev.fcap.engine;

import dev.fcap.algorithm.BookedEntries;
import dev.fcap.algorithm.PartitionStep;
import dev.fcap.model.Algorithm;
import dev.fcap.model.Rule;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.Store;
import dev.fcap.store.StoredCounter;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A recipient's live counters as the rules in force read them: the partition is read once, each
 * small counter evaluated in memory, and each large log (never read whole) by a dry run in the store.
 * The entries of a sliding log after the store's time are the messages booked for later (a large
 * log books none).
 */
final class Inspector {
  private final Store store;
  private final PolicyRegistry policies;

  Inspector(Store store, PolicyRegistry policies) {
    this.store = store;
    this.policies = policies;
  }

  /**
   * The inspection of a recipient in {@code recipientZone}; null reads the policy's zone, else UTC.
   * The zone places recipient-zone calendar counters and windows, as a message's zone does.
   */
  CompletableFuture<Inspection> inspect(String tenant, String recipient, ZoneId recipientZone) {
    CompiledPolicy cp = policies.get(tenant);
    ZoneId zone = recipientZone != null ? recipientZone
        : cp != null && cp.policy.timeZone() != null ? cp.policy.timeZone() : ZoneOffset.UTC;
    byte[] partition = Keys.recipientPartition(tenant, recipient);
    return store.read(partition).thenCompose(snapshot -> {
      // the dry runs of large logs may answer on the store's threads while this one adds the others
      List<CounterView> views = Collections.synchronizedList(new ArrayList<>());
      List<BookedView> booked = new ArrayList<>();
      List<CompletableFuture<Void>> large = new ArrayList<>();
      if (cp != null) {
        for (StoredCounter sc : snapshot.counters()) {
          CompiledPolicy.Group g = groupOf(cp, sc);
          if (g == null) {
            continue; // a counter of a rule that is no longer in the policy
          }
          CounterRequest c = counterAt(g, sc.key(), snapshot.time(), zone);
          if (sc.state() != null) {
            long[] used = new long[g.spec.checks()];
            long[] retryAt = new long[g.spec.checks()];
            PartitionStep.inspect(sc.state(), c, snapshot.time(), used, retryAt, 0);
            addViews(cp, g, sc.key(), used, retryAt, snapshot.time(), views);
            if (g.spec.algorithm() == Algorithm.SLIDING_LOG) {
              addBooked(cp, g, sc, snapshot.time(), booked);
            } else if (g.spec.algorithm() == Algorithm.FIXED_WINDOW) {
              addBookedWindows(cp, g, sc, c, snapshot.time(), booked);
            }
          } else {
            large.add(store.apply(PartitionRequest.of(partition, Operation.CHECK, PartitionRequest.STORE_TIME, 1,
                List.of(c))).thenAccept(r -> addViews(cp, g, sc.key(), r.used(), r.retryAt(), r.time(), views)));
          }
        }
      }
      return CompletableFuture.allOf(large.toArray(new CompletableFuture<?>[0]))
          .thenApply(done -> inspection(tenant, recipient, cp, snapshot.time(), zone, views, booked));
    });
  }

  /**
   * The counter as it reads at {@code time}: a calendar group's period in its zone (a recipient-zone
   * one in the recipient's zone: inspection names no message, so no message zone).
   */
  private static CounterRequest counterAt(CompiledPolicy.Group g, byte[] key, long time, ZoneId recipientZone) {
    if (g.calendar == null) {
      return new CounterRequest(key, g.spec, g.alignMs(time));
    }
    ZoneId zone = g.calendarZone(recipientZone);
    return new CounterRequest(key, g.periodSpec(time, zone), g.periodAlign(time, zone));
  }

  private static Inspection inspection(String tenant, String recipient, CompiledPolicy cp, long time, ZoneId zone,
      List<CounterView> views, List<BookedView> booked) {
    Map<String, Integer> order = new HashMap<>();
    if (cp != null) {
      for (int i = 0; i < cp.rules.length; i++) {
        order.put(cp.rules[i].id(), i);
      }
    }
    List<CounterView> sorted = new ArrayList<>(views);
    sorted.sort(Comparator.comparing((CounterView v) -> order.getOrDefault(v.ruleId(), Integer.MAX_VALUE))
        .thenComparing(v -> v.values().toString()));
    List<BookedView> byTime = new ArrayList<>(booked);
    byTime.sort(Comparator.comparingLong(BookedView::time)
        .thenComparing(b -> order.getOrDefault(b.rules().get(0), Integer.MAX_VALUE)));
    return new Inspection(tenant, recipient, time, cp == null ? 0 : cp.policy.version(), sorted, zone,
        windows(cp, time, zone), byTime);
  }

  /** The entries of a sliding log booked after {@code time}, each named by the rules that read the log. */
  private static void addBooked(CompiledPolicy cp, CompiledPolicy.Group g, StoredCounter sc, long time,
      List<BookedView> booked) {
    long[] times = BookedEntries.times(sc.state(), time);
    long[] costs = BookedEntries.costs(sc.state(), time);
    for (int i = 0; i < times.length; i++) {
      booked.add(new BookedView(ruleIds(cp, g), Keys.counterValues(sc.key(), g.key), times[i], costs[i]));
    }
  }

  /**
   * The later windows of a fixed window that hold bookings: one view per window, at its latest booked
   * instant, with the cost booked in it (a window keeps a count, not each message's time).
   */
  private static void addBookedWindows(CompiledPolicy cp, CompiledPolicy.Group g, StoredCounter sc,
      CounterRequest counter, long time, List<BookedView> booked) {
    for (long[] w : BookedEntries.windows(sc.state(), counter.spec(), counter.alignMs(), time)) {
      booked.add(new BookedView(ruleIds(cp, g), Keys.counterValues(sc.key(), g.key), w[0], w[1]));
    }
  }

  private static List<String> ruleIds(CompiledPolicy cp, CompiledPolicy.Group g) {
    List<String> rules = new ArrayList<>(g.rules.length);
    for (int r : g.rules) {
      rules.add(cp.rule(r).id());
    }
    return rules;
  }

  /** Every send-window rule of the policy, in policy order, as it stands at {@code time} in {@code zone}. */
  private static List<WindowView> windows(CompiledPolicy cp, long time, ZoneId recipientZone) {
    List<WindowView> windows = new ArrayList<>();
    if (cp == null) {
      return windows;
    }
    for (int i = 0; i < cp.rules.length; i++) {
      WindowSchedule s = cp.schedules[i];
      if (s != null) {
        Rule r = cp.rule(i);
        ZoneId zone = s.zoneFor(recipientZone);
        boolean open = s.isOpen(time, zone);
        windows.add(new WindowView(r.id(), r.enforced(), zone, open, open ? time : s.nextOpening(time, zone),
            r.match(), r.exempt()));
      }
    }
    return windows;
  }

  /** The group in force that a stored counter belongs to; null if its rule is no longer in the policy. */
  private static CompiledPolicy.Group groupOf(CompiledPolicy cp, StoredCounter sc) {
    if (sc.key().length < 8) {
      return null;
    }
    CompiledPolicy.Group g = cp.groupById(Keys.groupId(sc.key()));
    return g == null || g.spec.algorithm() != sc.algorithm() || !g.recipientKeyed ? null : g;
  }

  private static void addViews(CompiledPolicy cp, CompiledPolicy.Group g, byte[] key, long[] used, long[] retryAt,
      long time, List<CounterView> views) {
    Map<String, String> values = Keys.counterValues(key, g.key);
    for (int c = 0; c < g.rules.length; c++) {
      Rule r = cp.rule(g.rules[c]);
      long frees = retryAt[c] == PartitionResult.NEVER ? -1 : retryAt[c] - time;
      views.add(new CounterView(r.id(), r.limit(), r.windowMs(), r.enforced(), values, used[c],
          Math.max(0, r.limit() - used[c]), frees));
    }
  }
}
