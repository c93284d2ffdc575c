package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.engine.Inspection;
import dev.fcap.model.Algorithm;
import dev.fcap.model.Condition;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.ManualClock;
import dev.fcap.store.SeedRules;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * Feeds the same random traffic, at the same caller-supplied times, to an engine on MemoryStore and
 * an engine on another store, and compares every decision field by field (all but the random
 * decision id), every release and, at the end, every recipient's inspection.
 */
final class DifferentialTraffic {
  /** The seed policy plus a rule of every other algorithm, a shadow rule and a shared (per-sender) rule. */
  static final Policy POLICY = withRules(new Policy("default", 1, List.of(
      SeedRules.PER_MINUTE, SeedRules.PER_DAY, SeedRules.SAME_CONTENT_59S, SeedRules.SAME_CONTENT_59M,
      Rule.of("promo-counter-10m", 8, Duration.ofMinutes(10), Dimension.RECIPIENT)
          .withAlgorithm(Algorithm.SLIDING_COUNTER).withMatch(only(Dimension.CATEGORY, "promo")),
      new Rule("promo-fixed-day-shanghai", null, 12, Duration.ofDays(1), List.of(Dimension.RECIPIENT),
          only(Dimension.CATEGORY, "promo"), null, Algorithm.FIXED_WINDOW, 0, null, ZoneId.of("Asia/Shanghai")),
      Rule.of("email-fixed-5m", 3, Duration.ofMinutes(5), Dimension.RECIPIENT, Dimension.CHANNEL)
          .withAlgorithm(Algorithm.FIXED_WINDOW).withMatch(only(Dimension.CHANNEL, "email")),
      Rule.of("push-gcra-2m", 3, Duration.ofMinutes(2), Dimension.RECIPIENT, Dimension.CHANNEL)
          .withAlgorithm(Algorithm.GCRA).withMatch(only(Dimension.CHANNEL, "push")),
      Rule.of("shadow-4-per-minute", 4, Duration.ofMinutes(1), Dimension.RECIPIENT).withMode(Mode.SHADOW),
      Rule.of("marketing-per-hour", 4, Duration.ofHours(1), Dimension.RECIPIENT)
          .withMatch(only(Dimension.CATEGORY, "marketing")),
      Rule.of("sender-per-minute", 30, Duration.ofMinutes(1), Dimension.SENDER),
      // a window longer than 2^30 ms (12.4 days): with the rare 13-day jumps below, its log holds gaps
      // the Redis gap form cannot (docs/redis.md), so it takes the canonical layout there; shadow, so
      // that it leaves the other rules' traffic as it was
      Rule.of("email-per-30-days", 8, Duration.ofDays(30), Dimension.RECIPIENT)
          .withMatch(only(Dimension.CHANNEL, "email")).withMode(Mode.SHADOW),
      // a large log (capacity above LargeLog.LARGE_FROM entries: block keys on Redis): two checks on
      // one per-sender log, a shadow one so that the log keeps a margin (capacity 2 x 560), which
      // sender0 passes around the middle of a run and the enforced one late in a run
      Rule.of("sender-per-day", 560, Duration.ofDays(1), Dimension.SENDER),
      Rule.of("sender-shadow-per-day", 520, Duration.ofDays(1), Dimension.SENDER).withMode(Mode.SHADOW))),
      localTimeRules());

  /**
   * Rules in the recipient's own time: a marketing send window (the engine judges it; a shut one makes
   * the store step a dry run) and a cap per local day, whose fixed window the engine sizes per message
   * to the period of the message's zone (23, 24 or 25 hours): both stores get the same requests.
   */
  private static List<Rule> localTimeRules() {
    dev.fcap.model.SendWindow daytime = new dev.fcap.model.SendWindow(null, List.of(new dev.fcap.model.SendWindow.Interval(
        java.util.EnumSet.allOf(java.time.DayOfWeek.class), java.time.LocalTime.of(6, 0), java.time.LocalTime.of(23, 0))),
        Set.of());
    return List.of(
        Rule.ofSendWindow("marketing-push-daytime", null, daytime, new Condition(Map.of(Dimension.CATEGORY,
            Set.of("marketing"), Dimension.CHANNEL, Set.of("push"))), null, Mode.ENFORCE),
        new Rule("promo-per-local-day", null, 14, Duration.ofDays(1), List.of(Dimension.RECIPIENT),
            only(Dimension.CATEGORY, "promo"), null, Algorithm.FIXED_WINDOW, 0, Mode.ENFORCE, null, true,
            dev.fcap.model.CalendarUnit.DAY, null));
  }

  private static Policy withRules(Policy p, List<Rule> more) {
    List<Rule> all = new ArrayList<>(p.rules());
    all.addAll(more);
    return new Policy(p.tenant(), p.version(), all);
  }

  private static Condition only(Dimension d, String value) {
    return new Condition(Map.of(d, Set.of(value)));
  }

  private DifferentialTraffic() {}

  /** What a run exercised. */
  record Stats(int admitted, Map<String, Integer> refusalsByRule, Map<String, byte[]> releaseRecords) {}

  /** Runs {@code steps} random operations with {@code seed}; returns what it exercised. */
  static Stats run(Function<ManualClock, Store> other, long seed, int steps) {
    SplittableRandom random = new SplittableRandom(seed);
    ManualClock clock = new ManualClock();
    Store memoryStore = MemoryStore.builder().clock(clock).build();
    Store otherStore = other.apply(clock);
    // the release records the other store was asked to write (key in hex), with the bytes the
    // embedded store writes for them (PartitionStep.remember): partition.lua must write the same
    Map<String, byte[]> records = new java.util.concurrent.ConcurrentHashMap<>();
    Store recording = new Store() {
      @Override
      public java.util.concurrent.CompletableFuture<dev.fcap.store.PartitionResult> apply(
          dev.fcap.store.PartitionRequest r) {
        return otherStore.apply(r).thenApply(result -> {
          if (r.operation() == dev.fcap.store.Operation.DECIDE && r.idempotency() != null && result.allowed()
              && result.replayOf() == null) {
            records.put(java.util.HexFormat.of().formatHex(r.idempotency().key()),
                dev.fcap.algorithm.PartitionStep.remember(result, r.idempotency()));
          }
          return result;
        });
      }

      @Override
      public java.util.concurrent.CompletableFuture<dev.fcap.store.PartitionSnapshot> read(byte[] partition) {
        return otherStore.read(partition);
      }

      @Override
      public java.util.concurrent.CompletableFuture<Boolean> delete(byte[] partition) {
        return otherStore.delete(partition);
      }

      @Override
      public long now() {
        return otherStore.now();
      }

      @Override
      public void close() {
        otherStore.close();
      }
    };
    Engine memory = Engine.builder(memoryStore).clock(clock).callerTime(true).policy(POLICY).build();
    Engine redis = Engine.builder(recording).clock(clock).callerTime(true).policy(POLICY).build();
    String[] recipients = new String[60];
    for (int i = 0; i < recipients.length; i++) {
      recipients[i] = i % 3 == 0 ? "+1555000" + i : i % 3 == 1 ? "{odd}:" + i + " ü" : "user" + i + "@example.com";
    }
    long now = ManualClock.START + random.nextLong(86_400_000L);
    List<String[]> admitted = new ArrayList<>();
    int allowed = 0;
    Map<String, Integer> refusals = new java.util.TreeMap<>();
    for (int step = 0; step < steps; step++) {
      int jump = random.nextInt(2000);
      if (jump < 20) {
        now -= random.nextInt(3000); // a caller clock that went back a little: logs stay ordered
      } else if (jump < 21) {
        now += 13 * 86_400_000L + random.nextInt(600_000); // beyond every window but the 30-day one
      } else {
        now += jump < 41 ? random.nextInt(600_000) : random.nextInt(1500);
      }
      int action = random.nextInt(100);
      if (action < 5 && !admitted.isEmpty()) {
        String[] ids = admitted.remove(random.nextInt(admitted.size()));
        boolean a = memory.release(ids[0]).join();
        boolean b = redis.release(ids[1]).join();
        assertThat(b).as("release at step %d", step).isEqualTo(a);
        continue;
      }
      Message m = message(random, recipients, recipients[(step / 400) % recipients.length]);
      boolean dryRun = action < 15;
      Decision a = dryRun ? memory.checkAt(m, now).join() : memory.decideAt(m, now).join();
      Decision b = dryRun ? redis.checkAt(m, now).join() : redis.decideAt(m, now).join();
      assertThat(b).as("step %d (seed %d): %s", step, seed, m)
          .usingRecursiveComparison().ignoringFields("decisionId").isEqualTo(a);
      a.blockedBy().forEach(id -> refusals.merge(id, 1, Integer::sum));
      a.shadowBlockedBy().forEach(id -> refusals.merge(id, 1, Integer::sum));
      if (a.allowed() && !dryRun) {
        allowed++;
        admitted.add(new String[] {a.decisionId(), b.decisionId()});
      }
    }
    clock.set(now);
    for (String r : recipients) {
      Inspection a = inspectAt(memory, r);
      Inspection b = inspectAt(redis, r);
      assertThat(b.counters()).as("inspection of %s", r).isEqualTo(a.counters());
      // and the raw states, byte for byte (the Redis store translates its gap form back on read)
      byte[] partition = dev.fcap.store.StoreContract.partitionOf(r);
      assertThat(states(otherStore, partition)).as("states of %s", r).isEqualTo(states(memoryStore, partition));
    }
    redis.close();
    memory.close();
    return new Stats(allowed, refusals, records);
  }


  /** A partition's live counters as sorted "key algorithm state" lines (stores may order them differently). */
  static List<String> states(Store store, byte[] partition) {
    java.util.HexFormat hex = java.util.HexFormat.of();
    return store.read(partition).join().counters().stream()
        .map(c -> hex.formatHex(c.key()) + " " + c.algorithm() + " " + (c.state() == null ? "large" : hex.formatHex(c.state())))
        .sorted().toList();
  }

  private static Inspection inspectAt(Engine engine, String recipient) {
    return engine.inspect("default", recipient).join();
  }

  private static final String[] CATEGORIES = {"service", "service", "promo", "marketing"};
  private static final String[] CHANNELS = {"sms", "sms", "push", "email"};
  /** Each message its own zone (null: the policy's, UTC): half- and quarter-hour offsets, daylight saving. */
  private static final ZoneId[] ZONES = {null, ZoneId.of("America/New_York"), ZoneId.of("Asia/Kathmandu"),
      ZoneId.of("Australia/Lord_Howe")};

  /** A hot recipient (another one every 400 steps) takes 40 % of the traffic, so every rule gets to refuse. */
  private static Message message(SplittableRandom random, String[] recipients, String hot) {
    String recipient = random.nextInt(10) < 4 ? hot : recipients[random.nextInt(recipients.length)];
    Message.Builder b = Message.builder(recipient)
        .content("content " + random.nextInt(12))
        .channel(CHANNELS[random.nextInt(CHANNELS.length)])
        .sender(random.nextInt(5) == 0 ? "sender1" : "sender0")
        .category(CATEGORIES[random.nextInt(CATEGORIES.length)])
        .timeZone(ZONES[random.nextInt(ZONES.length)]);
    if (random.nextInt(10) == 0) {
      b.cost(1 + random.nextInt(3));
    }
    return b.build();
  }
}
