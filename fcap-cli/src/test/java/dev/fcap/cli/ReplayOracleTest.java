package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.policy.PolicyParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fcap replay} against a brute-force oracle, decision by decision, on one and on two decider
 * threads (two deciders, each at its own row's time, expired each other's counters and
 * over-admitted). The log is built to hit that: recipients get a day's quota in a burst of rows in
 * the same millisecond and come back just under 24 hours later, while 1,024-row batches span hours.
 * Whether the old bug shows here depends on how far the two threads drift apart, so the mechanism
 * is pinned down deterministically by {@code MemoryStoreSweepTest}; this test holds the whole path.
 */
class ReplayOracleTest {
  static final Path SEED = Path.of("../examples/rules.yaml");
  private static final long HOUR = 3_600_000L;
  @TempDir Path dir;

  @Test
  void oneAndTwoDecidersWriteTheOraclesDecisions() throws IOException {
    Path log = adversarialLog(dir.resolve("log.csv"), 7, 100_000);
    List<String> expected = oracle(PolicyParser.parseFile(SEED), log);
    assertThat(expected).as("the log reaches the day rule's limit")
        .anyMatch(l -> l.equals("false,recipient-per-day")).anyMatch(l -> l.startsWith("true"));
    for (boolean oneThread : new boolean[] {false, true}) {
      Path out = dir.resolve("decisions-" + oneThread + ".txt");
      replay(oneThread, "--rules", SEED.toString(), "--log", log.toString(), "--decisions", out.toString());
      List<String> got = normalized(Files.readAllLines(out));
      assertThat(mismatches(got, expected)).as("one thread: %s", oneThread).isEmpty();
    }
  }

  static void replay(boolean oneThread, String... args) {
    if (oneThread) {
      System.setProperty("fcap.replay.oneThread", "true");
    }
    try {
      CliRun run = CliRun.fcap(concat("replay", args));
      assertThat(run.exit()).as(run.err()).isZero();
    } finally {
      System.clearProperty("fcap.replay.oneThread");
    }
  }

  private static String[] concat(String first, String[] rest) {
    String[] all = new String[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  /** The first mismatches as "row: got vs expected" (at most 10). */
  static List<String> mismatches(List<String> got, List<String> expected) {
    assertThat(got).hasSameSizeAs(expected);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < got.size() && out.size() < 10; i++) {
      if (!got.get(i).equals(expected.get(i))) {
        out.add("row " + (i + 1) + ": " + got.get(i) + " vs " + expected.get(i));
      }
    }
    return out;
  }

  /**
   * A log sorted by time. 40 phone numbers and 5 ids that look like key syntax get a day's quota
   * and more in bursts of rows in one millisecond, every 2.5 days, and come back 0 to 4 hours
   * before the burst leaves the 24-hour window (to be refused); 40 other recipients get steady
   * traffic, so a 1,024-row batch spans hours and both deciders sweep every segment.
   */
  static Path adversarialLog(Path file, long seed, int rows) throws IOException {
    Random random = new Random(seed);
    List<String> who = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      who.add(String.format("+861390000%04d", i));
    }
    who.addAll(List.of("{a}", "a}{b", "名字", "a:b", "{"));
    long t0 = 1_793_491_200_000L; // 2026-11-01T00:00Z
    long span = 10 * 24 * HOUR;
    List<String[]> events = new ArrayList<>(); // time, recipient, content
    for (String r : who) {
      for (long burst = t0 + (long) (random.nextDouble() * 24 * HOUR); burst < t0 + span; burst += 60 * HOUR) {
        // a day's quota and more: groups of up to 20 rows in one millisecond, a minute apart,
        // one-off contents so that only the recipient rules bind
        for (int minute = 0; minute < 4; minute++) {
          int size = 10 + random.nextInt(11);
          for (int k = 0; k < size; k++) {
            events.add(new String[] {Long.toString(burst + minute * 60_000L), r, "code " + random.nextInt(1_000_000)});
          }
        }
        long back = burst + 24 * HOUR - 1 - (long) (random.nextDouble() * 4 * HOUR);
        for (int k = random.nextInt(4); k >= 0; k--) {
          events.add(new String[] {Long.toString(back + k), r, "offer " + random.nextInt(3)});
        }
      }
    }
    while (events.size() < rows) {
      long t = t0 + (long) (random.nextDouble() * span);
      events.add(new String[] {Long.toString(t), "+8613800" + (1000 + random.nextInt(40)), "offer " + random.nextInt(8)});
    }
    events.sort((a, b) -> Long.compare(Long.parseLong(a[0]), Long.parseLong(b[0])));
    StringBuilder csv = new StringBuilder("timestamp,recipient,content\n");
    for (String[] e : events) {
      csv.append(e[0]).append(',').append(e[1]).append(',').append(e[2]).append('\n');
    }
    Files.writeString(file, csv, StandardCharsets.UTF_8);
    return file;
  }

  /** One line per row, as the decisions file writes it, with the blocking rules sorted. */
  static List<String> normalized(List<String> lines) {
    List<String> out = new ArrayList<>(lines.size());
    for (String l : lines) {
      int comma = l.indexOf(',');
      String rules = l.substring(comma + 1);
      out.add(l.substring(0, comma) + "," + String.join(";",
          new TreeSet<>(rules.isEmpty() ? List.of() : Arrays.asList(rules.split(";")))));
    }
    return out;
  }

  /**
   * The decisions of a sliding-log policy, by brute force: every admitted event per rule and key,
   * each window recounted. Rows are decided in log order at their own times.
   */
  static List<String> oracle(List<Policy> policies, Path log) throws IOException {
    // rule + key -> admitted (time, cost), oldest first; the log is sorted, so what left the window
    // of its rule never counts again and is dropped
    Map<String, ArrayDeque<long[]>> admitted = new HashMap<>();
    List<String> out = new ArrayList<>();
    try (SendLog rows = new SendLog(Files.newBufferedReader(log, StandardCharsets.UTF_8))) {
      for (SendLog.Row row = rows.next(); row != null; row = rows.next()) {
        Message m = row.message();
        long now = row.time();
        TreeSet<String> blocked = new TreeSet<>();
        List<String> counters = new ArrayList<>();
        for (Policy p : policies) {
          if (!p.tenant().equals(m.tenant())) {
            continue;
          }
          for (Rule rule : p.rules()) {
            if (!applies(rule, m)) {
              continue;
            }
            String counter = rule.id() + "|" + keyOf(rule, m);
            counters.add(counter);
            long used = 0;
            ArrayDeque<long[]> events = admitted.computeIfAbsent(counter, k -> new ArrayDeque<>());
            while (!events.isEmpty() && events.peekFirst()[0] <= now - rule.windowMs()) {
              events.pollFirst();
            }
            for (long[] e : events) {
              if (e[0] > now - rule.windowMs() && e[0] <= now) {
                used += e[1];
              }
            }
            if (used + m.cost() > rule.limit() && rule.enforced()) {
              blocked.add(rule.id());
            }
          }
        }
        if (blocked.isEmpty()) {
          for (String c : counters) {
            admitted.get(c).addLast(new long[] {now, m.cost()});
          }
        }
        out.add(blocked.isEmpty() + "," + String.join(";", blocked));
      }
    }
    return out;
  }

  private static boolean applies(Rule rule, Message m) {
    for (Dimension d : rule.key()) {
      if (Dimension.CONTENT.equals(d) ? m.content() == null && m.contentKey() == null : d.valueOf(m) == null) {
        return false;
      }
    }
    return rule.appliesTo(m);
  }

  private static String keyOf(Rule rule, Message m) {
    StringBuilder key = new StringBuilder(m.tenant());
    for (Dimension d : rule.key()) {
      key.append('\u0000').append(Dimension.CONTENT.equals(d) ? m.content() + "\u0001" + m.contentKey() : d.valueOf(m));
    }
    return key.toString();
  }
}
