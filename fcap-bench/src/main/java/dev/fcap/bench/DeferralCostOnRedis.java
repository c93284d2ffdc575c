package dev.fcap.bench;

import dev.fcap.bench.redis.CommandStats;
import dev.fcap.algorithm.PartitionStep;
import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Defer;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.SendWindow;
import dev.fcap.store.ManualClock;
import dev.fcap.store.redis.RedisStore;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * What a booking costs inside Redis (docs/benchmarks.md, "Deferred decisions"), on a redis-server it
 * starts and stops on loopback, read from {@code INFO commandstats} (the scripts' own time) and
 * {@code SLOWLOG} (every call's).
 *
 * <p><b>Beside an ordinary decision</b>, with the seed policy: {@link DeferralCost}'s workload (each of
 * {@code --recipients} recipients gets 15 messages of distinct contents in one millisecond, admitted,
 * then 10 deferred ones, each booked a minute after the one it waits for, then 5 plain ones, refused
 * by a log that holds bookings), and one of one content (2 admitted, 1 booked, 1 refused); script
 * time per call of each phase, {@code --reps} times.
 *
 * <p><b>The longest booking</b>: one recipient under a rule of {@code --limit} messages a day (by
 * default the largest log that books, {@link PartitionStep#MAX_BOOKABLE_CAPACITY}) and a send window
 * open 09:00-17:00 UTC on weekdays; the day is filled, then messages are deferred until 7 days ahead,
 * each booked after the ones before, until the counter holds {@link PartitionStep#MAX_BOOKINGS}
 * bookings and the next books nothing: every booking sweeps the log in turns between the rule and
 * the window. Prints the slowest script call and how many took over 1 ms.
 *
 * <p><b>Instructions</b> ({@code --callgrind}): the two workloads beside an ordinary decision on a
 * redis-server run by valgrind's callgrind, which counts every instruction the server executes in
 * each phase (the script, the command around it, the network), zeroed before the phase and dumped
 * after it: store CPU per call that a noisy machine does not move. Then the longest booking, each
 * call counted on its own: the mean and the most a call executes, the bound a CPU of a given speed
 * turns into time.
 *
 * <pre>
 * java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.DeferralCostOnRedis [--recipients 20000] [--reps 3] [--limit 256] [--callgrind]
 * </pre>
 */
public final class DeferralCostOnRedis {
  private static final long T0 = Instant.parse("2026-03-02T09:00:00Z").toEpochMilli(); // a Monday
  private static final int IN_FLIGHT = 256;
  private static final int SLOWLOG_LENGTH = 8 * (PartitionStep.MAX_BOOKINGS + 8);

  private DeferralCostOnRedis() {}

  public static void main(String[] args) throws Exception {
    int recipients = 20_000;
    int reps = 3;
    long limit = PartitionStep.MAX_BOOKABLE_CAPACITY;
    boolean callgrind = false;
    for (int i = 0; i < args.length; i += 2) {
      switch (args[i]) {
        case "--recipients" -> recipients = Integer.parseInt(args[i + 1]);
        case "--reps" -> reps = Integer.parseInt(args[i + 1]);
        case "--limit" -> limit = Long.parseLong(args[i + 1]);
        case "--callgrind" -> {
          callgrind = true;
          i--; // a flag: no value
        }
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + "; use --recipients N, --reps N, --limit L, --callgrind");
      }
    }
    if (callgrind) {
      Path dir = Files.createTempDirectory("fcap-callgrind");
      try (RedisServer server = RedisServer.startUnder(List.of(Callgrind.command("valgrind"), "--tool=callgrind",
          "--callgrind-out-file=" + dir.resolve("callgrind.out.%p")), dir, RedisServer.freePort(false))) {
        run("redis://127.0.0.1:" + server.port(), recipients, reps, limit, new Callgrind(server.pid(), dir));
      }
      return;
    }
    try (RedisDeployment redis = RedisDeployment.standalone()) {
      run(redis.uri(), recipients, reps, limit, null);
    }
  }

  /** Both workloads {@code reps} times, then the longest booking unless {@code limit} is negative. */
  private static void run(String uri, int recipients, int reps, long limit, Callgrind callgrind) {
    RedisClient admin = RedisClient.create(RedisURI.create(uri));
    try (StatefulRedisConnection<String, String> c = admin.connect(StringCodec.UTF8)) {
      RedisCommands<String, String> r = c.sync();
      for (int rep = 0; rep < reps; rep++) {
        r.flushall();
        besideAnOrdinaryDecision(uri, r, recipients, rep, true, callgrind);
        r.flushall();
        besideAnOrdinaryDecision(uri, r, recipients, rep, false, callgrind);
      }
      if (limit >= 0) {
        r.flushall();
        longestBooking(uri, r, limit, callgrind);
      }
    } finally {
      admin.shutdown();
    }
  }

  /**
   * A redis-server under callgrind: {@code callgrind_control} zeroes its counts before a phase and
   * dumps them after it, into the next {@code callgrind.out.PID.N} of {@code dir}.
   */
  private static final class Callgrind {
    private final String control = command("callgrind_control");
    private final long pid;
    private final Path dir;
    private int dumps;

    Callgrind(long pid, Path dir) {
      this.pid = pid;
      this.dir = dir;
    }

    void zero() {
      control("-z");
    }

    /** The instructions executed since {@link #zero}; the dump is read, then deleted (one a call adds up). */
    long dump() {
      control("-d");
      Path file = dir.resolve("callgrind.out." + pid + "." + ++dumps);
      try {
        List<String> lines = Files.readAllLines(file);
        Files.delete(file);
        for (String line : lines) {
          if (line.startsWith("totals:") || line.startsWith("summary:")) {
            return Long.parseLong(line.substring(line.indexOf(':') + 1).trim().split("\\s+")[0]);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + file, e);
      }
      throw new IllegalStateException(file + " holds no totals");
    }

    private void control(String option) {
      try {
        Process p = new ProcessBuilder(control, option, Long.toString(pid)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
          throw new IllegalStateException("callgrind_control " + option + " failed: " + out);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }

    static String command(String name) {
      return RedisServer.onPath(name, "--callgrind needs valgrind: apt-get install valgrind (scripts/test does this)");
    }
  }

  /**
   * {@code distinct}: {@link DeferralCost}'s workload (15 contents a recipient, each a counter of its
   * own in the partition); else one content: 2 admitted, 1 booked when the first leaves the
   * same-content minute, 1 refused (two counters in the partition).
   */
  private static void besideAnOrdinaryDecision(String uri, RedisCommands<String, String> r, int recipients, int rep,
      boolean distinct, Callgrind callgrind) {
    ManualClock clock = new ManualClock(T0);
    // under callgrind a call takes milliseconds, and IN_FLIGHT of them queue
    Duration timeout = callgrind == null ? Duration.ofSeconds(1) : Duration.ofMinutes(1);
    try (Engine engine = Engine.builder(RedisStore.builder(uri).clock(clock).commandTimeout(timeout).build()).clock(clock)
        .policies(SeedPolicy.load()).build()) {
      int[] perRecipient = distinct ? new int[] {SeedPolicy.PER_MINUTE, 10, 5} : new int[] {2, 1, 1};
      String[] names = {"admitted", "booked", "refused"};
      List<Predicate<Decision>> expected = List.of(Decision::allowed, Decision::deferred,
          d -> !d.allowed() && !d.deferred());
      double[] usec = new double[3];
      double[] instructions = new double[3];
      StringBuilder line = new StringBuilder("rep " + rep + (distinct ? ", 15 contents:" : ", one content:"));
      for (int p = 0; p < 3; p++) {
        r.configResetstat();
        if (callgrind != null) {
          callgrind.zero();
        }
        Deque<CompletableFuture<Decision>> inFlight = new ArrayDeque<>();
        long wrong = 0;
        for (int k = 0; k < perRecipient[p]; k++) {
          for (int i = 0; i < recipients; i++) {
            Message m = Message.builder("+1555" + (1_000_000 + i))
                .content(distinct ? "offer " + p + "-" + k : "your code").build();
            inFlight.add(engine.decide(p == 1 ? m.withDefer(Defer.BY_DEFAULT) : m));
            if (inFlight.size() >= IN_FLIGHT) {
              wrong += expected.get(p).test(inFlight.poll().join()) ? 0 : 1;
            }
          }
        }
        while (!inFlight.isEmpty()) {
          wrong += expected.get(p).test(inFlight.poll().join()) ? 0 : 1;
        }
        if (wrong > 0) {
          throw new IllegalStateException(names[p] + ": " + wrong + " decisions not as expected");
        }
        long executed = callgrind == null ? 0 : callgrind.dump();
        String stats = r.info("commandstats");
        long calls = CommandStats.calls(stats, "evalsha");
        usec[p] = (double) CommandStats.scriptUsec(stats) / calls;
        instructions[p] = (double) executed / calls;
        line.append(callgrind == null ? String.format(" %s %.2f us;", names[p], usec[p])
            : String.format(" %s %,.0f instructions;", names[p], instructions[p]));
      }
      double[] per = callgrind == null ? usec : instructions;
      System.out.println(line + String.format(" %s per call, booked/admitted %.2fx, refused/admitted %.2fx",
          callgrind == null ? "script time" : "redis-server instructions", per[1] / per[0], per[2] / per[0]));
    }
  }

  private static void longestBooking(String uri, RedisCommands<String, String> r, long limit, Callgrind callgrind) {
    Rule perDay = Rule.of("per-day", limit, Duration.ofDays(1), Dimension.RECIPIENT);
    Rule officeHours = Rule.ofSendWindow("office-hours", null, new SendWindow(ZoneOffset.UTC,
        List.of(new SendWindow.Interval(EnumSet.range(DayOfWeek.MONDAY, DayOfWeek.FRIDAY), LocalTime.of(9, 0),
            LocalTime.of(17, 0))), Set.of()), null, null, Mode.ENFORCE);
    ManualClock clock = new ManualClock(T0);
    Duration timeout = callgrind == null ? Duration.ofSeconds(1) : Duration.ofMinutes(1);
    try (Engine engine = Engine.builder(RedisStore.builder(uri).clock(clock).commandTimeout(timeout).build()).clock(clock)
        .policy(new Policy("default", 1, List.of(perDay, officeHours))).build()) {
      for (long i = 0; i < limit; i++) { // the day filled over its first hour
        clock.set(T0 + i * 3_600_000 / limit);
        engine.decide(Message.builder("one").build()).join();
      }
      clock.set(T0 + 3_600_000);
      r.configSet("slowlog-log-slower-than", "0");
      // every booking's call, and the commands it ran (SLOWLOG lists a script's GET and SET too): a
      // counter holds at most MAX_BOOKINGS bookings
      r.configSet("slowlog-max-len", Integer.toString(SLOWLOG_LENGTH));
      r.slowlogReset();
      r.configResetstat();
      Defer week = Defer.until(Instant.ofEpochMilli(clock.millis() + Duration.ofDays(7).toMillis() - 1));
      long booked = 0;
      long last = 0;
      long instructions = 0;
      long most = 0;
      while (true) {
        if (callgrind != null) {
          callgrind.zero();
        }
        Decision d = engine.decide(Message.builder("one").defer(week).build()).join();
        long executed = callgrind == null ? 0 : callgrind.dump();
        instructions += executed;
        most = Math.max(most, executed);
        if (!d.deferred()) {
          break;
        }
        if (d.sendAt() < last) {
          throw new IllegalStateException("booked at " + d.sendAt() + " before the booking before it, " + last);
        }
        last = d.sendAt();
        booked++;
      }
      long[] micros = r.slowlogGet(SLOWLOG_LENGTH).stream()
          .filter(e -> String.valueOf(((List<?>) e).get(3)).toLowerCase().contains("evalsha"))
          .mapToLong(e -> (Long) ((List<?>) e).get(2)).sorted().toArray();
      String stats = r.info("commandstats");
      System.out.printf("longest booking: limit %,d a day, %,d booked until %s (the log then %,d entries); "
          + "script time per booking %.1f us (commandstats), median %d us, max %d us, %d calls over 1 ms "
          + "(of %,d scripts in SLOWLOG)%n", limit, booked, Instant.ofEpochMilli(last), limit + booked,
          (double) CommandStats.scriptUsec(stats) / CommandStats.calls(stats, "evalsha"),
          micros.length == 0 ? 0 : micros[micros.length / 2], micros.length == 0 ? 0 : micros[micros.length - 1],
          Arrays.stream(micros).filter(m -> m > 1000).count(), micros.length);
      if (callgrind != null) {
        System.out.printf("longest booking: redis-server instructions per call %,.0f, at most %,d (of %,d calls)%n",
            (double) instructions / (booked + 1), most, booked + 1);
      }
    }
  }
}
