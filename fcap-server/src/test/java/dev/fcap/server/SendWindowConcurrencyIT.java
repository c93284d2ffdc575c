package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.oracle.Oracle;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.MemoryStore;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Eight concurrent callers, single decisions and batches over HTTP, on one server with a send window
 * in the recipient's zone and caps of a local day, ISO week and month, for recipients in New York,
 * London, Kolkata, Kathmandu, Lord Howe, UTC and the policy's default zone. The store's clock is a
 * manual one that moves on between rounds of all callers at once (minutes to most of a day, to just
 * before quarter hours and daylight-saving changes), from two days before New York's spring change
 * to past Lord Howe's autumn one; every decision's time is in its answer.
 *
 * <p>Each answer is then judged by local time computed here with java.time, from the rules' text
 * and not from the engine: no admitted marketing message lies outside the window, no recipient's
 * admitted messages put any local day, week or month over its cap, the window is in
 * {@code blockedBy} exactly when it is shut, a cap in {@code blockedBy} had its limit admitted by
 * then, and every refusal's {@code sendAt} is the first instant, at or after the ends of the
 * periods of the caps that refused, at which the window is open. Recipients that one caller owns are
 * also held to the {@link Oracle} field by field.
 */
class SendWindowConcurrencyIT {
  private static final String RULES = """
      policies:
        - tenant: default
          timeZone: Asia/Kathmandu
          rules:
            - id: quiet-hours
              sendWindow:
                zone: recipient
                allow:
                  - {days: [mon, tue, wed, thu, fri], from: "08:00", to: "21:00"}
                  - {days: [fri, sat], from: "22:30", to: "01:30"}
                  - {days: [sun], from: "02:15", to: "04:00"}
                closed: ["2026-03-09", "2026-03-20", "2026-03-29", "2026-04-03"]
              match: {category: [marketing]}
            - {id: per-local-day, limit: 2, window: 1d, key: [recipient], algorithm: fixed-window, zone: recipient,
               match: {category: [marketing]}}
            - {id: per-local-week, limit: 7, window: 1w, key: [recipient], algorithm: fixed-window, zone: recipient,
               match: {category: [marketing]}}
            - {id: per-local-month, limit: 40, window: 1mo, key: [recipient], algorithm: fixed-window,
               zone: recipient}
      """;
  /** Recipients' zones; null: the message carries none (the policy's default). */
  private static final String[] ZONES = {
    "America/New_York", "Europe/London", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "UTC", null
  };
  private static final Set<LocalDate> CLOSED = Set.of(LocalDate.parse("2026-03-09"), LocalDate.parse("2026-03-20"),
      LocalDate.parse("2026-03-29"), LocalDate.parse("2026-04-03"));
  private static final Set<DayOfWeek> WEEKDAYS = EnumSet.range(DayOfWeek.MONDAY, DayOfWeek.FRIDAY);
  private static final Set<DayOfWeek> LATE = EnumSet.of(DayOfWeek.FRIDAY, DayOfWeek.SATURDAY);
  /** 2026-03-06T06:00Z, a Friday: New York springs forward on the 8th, London on the 29th, Lord Howe falls back on April 5th. */
  private static final long START = Instant.parse("2026-03-06T06:00:00Z").toEpochMilli();
  private static final long MINUTE = 60_000L;
  private static final int CALLERS = 8;
  private static final int ROUNDS = 500;
  private static final int SHARED = 8;

  /** A decision and the message it answered. */
  private record Sent(Message message, ZoneId zone, Decision decision) {}

  @Test
  void concurrentCallersGetAnswersThatKeepEveryLocalRuleAndSendAtTheNextOpening() throws Exception {
    ManualClock clock = new ManualClock(START);
    MemoryStore store = MemoryStore.builder().clock(clock).segments(2).build();
    try (TestServer server = TestServer.start(RULES, Map.of(), store)) {
      Policy policy = PolicyParser.parseFile(server.dir.resolve("rules.yaml")).get(0); // what the server reads
      List<Sent> all = Collections.synchronizedList(new ArrayList<>());
      AtomicInteger sentCount = new AtomicInteger();
      CyclicBarrier round = new CyclicBarrier(CALLERS, clockMover(clock));
      ExecutorService pool = Executors.newFixedThreadPool(CALLERS);
      List<Future<List<String>>> callers = new ArrayList<>();
      for (int c = 0; c < CALLERS; c++) {
        int caller = c;
        callers.add(pool.submit(() -> call(server, policy, round, caller, all, sentCount)));
      }
      List<String> oracleMismatches = new ArrayList<>();
      for (Future<List<String>> f : callers) {
        oracleMismatches.addAll(f.get(300, TimeUnit.SECONDS));
      }
      pool.shutdown();
      assertThat(oracleMismatches).as("decisions of recipients with one caller, against the oracle").isEmpty();
      assertThat(clock.millis()).as("the run reaches past Lord Howe's change").isGreaterThan(
          Instant.parse("2026-04-05T00:00:00Z").toEpochMilli());

      List<String> broken = new ArrayList<>();
      Map<String, List<Sent>> byRecipient = new HashMap<>();
      for (Sent s : all) {
        byRecipient.computeIfAbsent(s.message().recipient(), k -> new ArrayList<>()).add(s);
      }
      Map<String, Integer> refusedBy = new HashMap<>();
      for (List<Sent> sent : byRecipient.values()) {
        judge(sent, broken, refusedBy);
      }
      assertThat(broken).as("%d decisions judged; first broken: %s", all.size(),
          broken.subList(0, Math.min(10, broken.size()))).isEmpty();
      assertThat(all).as("every message answered").hasSize(sentCount.get());
      // about 6,500 decisions, a quarter admitted; each rule refuses hundreds (the month cap the most)
      assertThat(refusedBy).as("every rule refused its share").containsOnlyKeys("quiet-hours", "per-local-day",
          "per-local-week", "per-local-month").allSatisfy((id, n) -> assertThat(n).as(id).isGreaterThan(100));
      assertThat(all.stream().filter(s -> s.decision().allowed()).count()).as("admitted").isGreaterThan(500);
      assertThat(all).as("admitted marketing inside the window's midnight-spanning interval").anyMatch(s ->
          s.decision().allowed() && marketing(s.message()) && LocalDateTime.ofInstant(
              Instant.ofEpochMilli(s.decision().time()), s.zone()).toLocalTime().isBefore(LocalTime.of(1, 30)));
    }
  }

  /**
   * One caller: {@link #ROUNDS} rounds of a single decision or a batch of 2 to 5 messages, to its own
   * two recipients and to the shared ones; after each round it waits at {@code round} for the
   * others, and the clock moves on between rounds only (a window is judged at the engine's reading
   * of the clock, counters at the store's: within a round both read the same instant).
   */
  private static List<String> call(TestServer server, Policy policy, CyclicBarrier round, int caller, List<Sent> all,
      AtomicInteger sentCount) throws Exception {
    SplittableRandom random = new SplittableRandom(caller * 7919L + 1);
    Oracle oracle = new Oracle(policy);
    List<String> mismatches = new ArrayList<>();
    for (int r = 0; r < ROUNDS; r++) {
      int size = random.nextInt(4) == 0 ? 2 + random.nextInt(4) : 1;
      List<Message> messages = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        messages.add(message(random, caller));
      }
      sentCount.addAndGet(size);
      List<Decision> decisions = new ArrayList<>();
      if (size == 1) {
        decisions.add(HttpOracleIT.decision(server.decide(json(messages.get(0)).toString()).body()));
      } else {
        ArrayNode requests = TestServer.JSON.createArrayNode();
        messages.forEach(m -> requests.add(json(m)));
        ObjectNode batch = TestServer.JSON.createObjectNode();
        batch.set("requests", requests);
        for (JsonNode item : server.post("/v1/decisions/batch", batch.toString()).body().get("results")) {
          decisions.add(HttpOracleIT.decision(item));
        }
      }
      assertThat(decisions).hasSize(size);
      for (int i = 0; i < size; i++) {
        Message m = messages.get(i);
        Decision d = decisions.get(i);
        all.add(new Sent(m, policy.zoneOf(m), d));
        if (m.recipient().startsWith("own-")) {
          Oracle.Verdict v = oracle.decide(m, d.time(), false, d, d.decisionId());
          if (!v.matches() && mismatches.size() < 10) {
            mismatches.add(m.recipient() + " at " + Instant.ofEpochMilli(d.time()) + ": " + v.mismatches());
          }
        }
      }
      round.await(60, TimeUnit.SECONDS);
    }
    return mismatches;
  }

  /**
   * The clock's move between two rounds: now and then to just before a quarter hour (where the
   * window opens and closes) or before the next daylight-saving change of New York, London or Lord
   * Howe; else minutes, hours, or most of a day. About 38 days over the run.
   */
  private static Runnable clockMover(ManualClock clock) {
    SplittableRandom random = new SplittableRandom(42);
    ZoneId[] changing = {ZoneId.of("America/New_York"), ZoneId.of("Europe/London"), ZoneId.of("Australia/Lord_Howe")};
    return () -> {
      long now = clock.millis();
      int kind = random.nextInt(100);
      if (kind < 8) {
        long quarter = 15 * MINUTE;
        clock.set(Math.max(now, Math.floorDiv(now, quarter) * quarter + quarter - random.nextInt(3000)));
        return;
      }
      if (kind < 12) {
        var next = changing[random.nextInt(changing.length)].getRules().nextTransition(Instant.ofEpochMilli(now));
        long at = next.getInstant().toEpochMilli() - random.nextInt(20) * MINUTE - random.nextInt(60_000);
        if (at > now && at < now + 20 * 86_400_000L) {
          clock.set(at);
          return;
        }
      }
      int step = random.nextInt(10);
      clock.advance((step < 6 ? random.nextInt(60) : step < 9 ? random.nextInt(300) : random.nextInt(960)) * MINUTE
          + random.nextInt(60_000));
    };
  }

  /** To one of the caller's own two recipients, or one of the shared ones; each recipient always in its own zone. */
  private static Message message(SplittableRandom random, int caller) {
    String recipient;
    int zone;
    if (random.nextBoolean()) {
      int k = random.nextInt(2);
      recipient = "own-" + caller + "-" + k;
      zone = caller * 2 + k;
    } else {
      int k = random.nextInt(SHARED);
      recipient = "shared-" + k;
      zone = k;
    }
    Message.Builder b = Message.builder(recipient).category(random.nextInt(10) < 7 ? "marketing" : "service");
    String id = ZONES[zone % ZONES.length];
    if (id != null) {
      b.timeZone(ZoneId.of(id));
    }
    return b.build();
  }

  private static ObjectNode json(Message m) {
    ObjectNode o = TestServer.JSON.createObjectNode();
    o.put("recipient", m.recipient()).put("category", m.category());
    if (m.timeZone() != null) {
      o.put("timeZone", m.timeZone().getId());
    }
    return o;
  }

  private static boolean marketing(Message m) {
    return "marketing".equals(m.category());
  }

  // ------------------------------------------------------------------------------------------------
  // The rules, by the wall clock of the recipient's zone, with java.time.

  /** The caps: id, limit, unit, whether only marketing counts. */
  private enum Cap {
    DAY("per-local-day", 2, true), WEEK("per-local-week", 7, true), MONTH("per-local-month", 40, false);

    final String id;
    final int limit;
    final boolean marketingOnly;

    Cap(String id, int limit, boolean marketingOnly) {
      this.id = id;
      this.limit = limit;
      this.marketingOnly = marketingOnly;
    }

    boolean applies(Message m) {
      return !marketingOnly || marketing(m);
    }

    /** The first local date of the period holding {@code date}. */
    LocalDate start(LocalDate date) {
      return switch (this) {
        case DAY -> date;
        case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
        case MONTH -> date.withDayOfMonth(1);
      };
    }

    /** The instant the period holding {@code t} in {@code zone} ends: the next period's first local midnight. */
    long end(ZoneId zone, long t) {
      LocalDate first = start(localDate(zone, t));
      LocalDate next = switch (this) {
        case DAY -> first.plusDays(1);
        case WEEK -> first.plusWeeks(1);
        case MONTH -> first.plusMonths(1);
      };
      return next.atStartOfDay(zone).toInstant().toEpochMilli();
    }
  }

  private static LocalDate localDate(ZoneId zone, long t) {
    return LocalDateTime.ofInstant(Instant.ofEpochMilli(t), zone).toLocalDate();
  }

  /** Whether the quiet-hours window holds instant {@code t} by the wall clock of {@code zone}: the rules' text. */
  static boolean open(ZoneId zone, long t) {
    LocalDateTime local = LocalDateTime.ofInstant(Instant.ofEpochMilli(t), zone);
    LocalDate date = local.toLocalDate();
    LocalDate yesterday = date.minusDays(1);
    LocalTime time = local.toLocalTime();
    boolean daytime = opensOn(date, WEEKDAYS) && !time.isBefore(LocalTime.of(8, 0)) && time.isBefore(LocalTime.of(21, 0));
    boolean lateEvening = opensOn(date, LATE) && !time.isBefore(LocalTime.of(22, 30));
    boolean afterMidnight = opensOn(yesterday, LATE) && time.isBefore(LocalTime.of(1, 30));
    boolean sundayNight = opensOn(date, EnumSet.of(DayOfWeek.SUNDAY)) && !time.isBefore(LocalTime.of(2, 15))
        && time.isBefore(LocalTime.of(4, 0));
    return daytime || lateEvening || afterMidnight || sundayNight;
  }

  private static boolean opensOn(LocalDate date, Set<DayOfWeek> days) {
    return days.contains(date.getDayOfWeek()) && !CLOSED.contains(date);
  }

  /** The first instant at or after {@code from} at which the window is open: {@code from}, else each whole minute after it. */
  static long nextOpening(ZoneId zone, long from) {
    if (open(zone, from)) {
      return from;
    }
    for (long t = Math.floorDiv(from, MINUTE) * MINUTE + MINUTE; t < from + 40 * 86_400_000L; t += MINUTE) {
      if (open(zone, t)) {
        return t;
      }
    }
    throw new AssertionError("the window never opens after " + Instant.ofEpochMilli(from));
  }

  /** Judges one recipient's decisions (in any order: callers interleave) against the rules' text. */
  private static void judge(List<Sent> sent, List<String> broken, Map<String, Integer> refusedBy) {
    // per cap and period (its first local date), the times of the admitted messages
    Map<Cap, Map<LocalDate, List<Long>>> admitted = new HashMap<>();
    for (Sent s : sent) {
      if (!s.decision().allowed()) {
        continue;
      }
      for (Cap cap : Cap.values()) {
        if (cap.applies(s.message())) {
          admitted.computeIfAbsent(cap, c -> new HashMap<>())
              .computeIfAbsent(cap.start(localDate(s.zone(), s.decision().time())), p -> new ArrayList<>())
              .add(s.decision().time());
        }
      }
    }
    admitted.forEach((cap, periods) -> periods.forEach((first, times) -> {
      if (times.size() > cap.limit) {
        broken.add(sent.get(0).message().recipient() + ": " + times.size() + " admitted in " + cap.id + " from "
            + first + " (limit " + cap.limit + ")");
      }
    }));
    for (Sent s : sent) {
      Decision d = s.decision();
      long t = d.time();
      String what = s.message().recipient() + " (" + s.zone() + ") " + s.message().category() + " at "
          + LocalDateTime.ofInstant(Instant.ofEpochMilli(t), s.zone()) + " local, " + t + ": ";
      boolean windowApplies = marketing(s.message());
      boolean shut = windowApplies && !open(s.zone(), t);
      if (d.blockedBy().contains("quiet-hours") != shut) {
        broken.add(what + "blockedBy " + d.blockedBy() + ", window " + (shut ? "shut" : "open or not applying"));
      }
      if (d.allowed()) {
        continue;
      }
      long from = t;
      for (String id : d.blockedBy()) {
        refusedBy.merge(id, 1, Integer::sum);
        for (Cap cap : Cap.values()) {
          if (cap.id.equals(id)) {
            List<Long> times = admitted.getOrDefault(cap, Map.of())
                .getOrDefault(cap.start(localDate(s.zone(), t)), List.of());
            long before = times.stream().filter(x -> x <= t).count();
            if (before < cap.limit) {
              broken.add(what + cap.id + " refused with " + before + " admitted in its period by then");
            }
            from = Math.max(from, cap.end(s.zone(), t));
          }
        }
      }
      long sendAt = windowApplies ? nextOpening(s.zone(), from) : from;
      if (d.sendAt() != sendAt || d.retryAfterMs() != sendAt - t) {
        broken.add(what + "blockedBy " + d.blockedBy() + ", sendAt " + Instant.ofEpochMilli(d.sendAt()) + " retryAfterMs "
            + d.retryAfterMs() + ", expected " + Instant.ofEpochMilli(sendAt) + " ("
            + LocalDateTime.ofInstant(Instant.ofEpochMilli(sendAt), s.zone()) + " local)");
      }
    }
  }
}
