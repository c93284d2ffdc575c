package dev.fcap.cli;

import static dev.fcap.cli.CliRun.fcap;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.oracle.Oracle;
import dev.fcap.oracle.Traffic;
import dev.fcap.policy.PolicyParser;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code fcap replay} of a log with a {@code timeZone} column against the {@link Oracle}, which reads
 * local time with java.time's IANA rules and nothing of the engine: send windows in the recipient's
 * zone (one interval spanning midnight, one opening inside New York's spring-forward gap, closed
 * dates on and near daylight-saving changes) and caps of a local day, ISO week and month, on one
 * and on two decider threads; the decisions file must equal the oracle's on every row (allowed,
 * and the enforced rules that refused). The log comes from {@link Traffic} with zones: each
 * recipient mostly in its own zone (New York, London, Kolkata, Kathmandu, Lord Howe, Chatham, UTC,
 * or none: the policy's), sometimes another, with jumps to just before zone transitions and quarter
 * hours, clock steps back, bursts in one millisecond and idle days.
 *
 * <p>A send window counts nothing, so a policy of windows and recipient-keyed counters splits rows
 * by recipient: two threads decide ({@link BatchDecider}), and on Redis every recipient's chain is
 * in flight at once ({@code ReplayWindowsOnRedisIT}).
 */
class ReplayWindowsOracleTest {
  /** Quiet hours in the recipient's zone, a shadow night window, and caps of a local day, week and month. */
  static final String QUIET_HOURS = """
      policies:
        - tenant: default
          timeZone: Europe/London
          rules:
            - id: quiet-hours
              sendWindow:
                zone: recipient
                allow:
                  - {days: [mon, tue, wed, thu, fri], from: "08:00", to: "21:00"}
                  - {days: [fri, sat], from: "22:30", to: "01:30"}
                  - {days: [sun], from: "02:15", to: "04:00"}
                closed: ["2026-01-02", "2026-03-08", "2026-03-27", "2026-03-29", "2026-04-03", "2026-04-05",
                         "2026-09-27", "2026-10-04", "2026-10-25", "2026-11-01"]
              match: {category: [marketing, promo]}
            - id: night-watch
              mode: shadow
              sendWindow:
                zone: recipient
                allow: [{from: "07:00", to: "23:00"}]
            - id: per-local-day
              limit: 3
              window: 1d
              key: [recipient]
              algorithm: fixed-window
              zone: recipient
              match: {category: [marketing, promo]}
            - id: per-local-week
              limit: 8
              window: 1w
              key: [recipient]
              algorithm: fixed-window
              zone: recipient
              match: {category: [marketing, promo]}
            - id: per-local-month
              limit: 20
              window: 1mo
              key: [recipient]
              algorithm: fixed-window
              zone: recipient
            - id: per-minute
              limit: 4
              window: 1m
              key: [recipient]
      """;
  /** 2026-01-01T00:00Z: the traffic runs on through the year's transitions. */
  static final long START = 1_767_225_600_000L;
  static final int QUIET_HOURS_ROWS = Integer.getInteger("fcap.oracle.replayRows", 60_000);

  @TempDir Path dir;

  @ParameterizedTest(name = "quiet hours and local caps, {0} decider thread(s)")
  @CsvSource({"1", "2"})
  void quietHoursAndLocalCapsMatchTheOracle(int threads) throws IOException {
    Path rules = Files.writeString(dir.resolve("rules.yaml"), QUIET_HOURS);
    Expected expected = logAndOracle(rules, dir.resolve("log.csv"), 31, QUIET_HOURS_ROWS);
    expected.assertCovers("quiet-hours", "per-local-day", "per-local-week", "per-local-month", "per-minute");
    assertReplayMatches(expected, threads, null);
  }

  @ParameterizedTest(name = "random windows and calendars {0}, {1} decider thread(s)")
  @CsvSource({"2, 1", "2, 2", "12, 1", "12, 2", "35, 1", "35, 2", "56, 1", "56, 2"})
  void randomWindowsAndCalendarsMatchTheOracle(long policySeed, int threads) throws IOException {
    Path rules = Files.writeString(dir.resolve("rules.yaml"), randomWindowsYaml(policySeed));
    Expected expected = logAndOracle(rules, dir.resolve("log.csv"), 200 + policySeed, 12_000);
    assertReplayMatches(expected, threads, null);
  }

  /**
   * A random recipient-keyed policy with send windows and calendar caps (fixed or recipient zones,
   * a default zone sometimes), as a rules file. The seeds above give policies with an enforced
   * window and a recipient-zone cap: among them windows spanning midnight, closed dates, caps of a
   * day, a week and a month, default zones of Kathmandu, London and New York, headroom and count-only rules. Sliding-counter rules become logs: their answers are
   * only bounded, not predicted (the engine tests hold them to the bound).
   */
  static String randomWindowsYaml(long seed) {
    Policy random = Traffic.randomPolicy(seed, 12, true, true);
    List<Rule> rules = new ArrayList<>();
    for (Rule r : random.rules()) {
      rules.add(r.algorithm() == Algorithm.SLIDING_COUNTER ? r.withAlgorithm(Algorithm.SLIDING_LOG) : r);
    }
    Policy policy = new Policy(random.tenant(), 1, rules, random.timeZone());
    assertThat(rules).as("policy %d has an enforced send window and recipient-zone calendar", seed)
        .anyMatch(r -> r.isSendWindow() && r.enforced()).anyMatch(r -> r.recipientZone() && r.enforced());
    return PolicyParser.toYaml(List.of(policy));
  }

  /** The oracle's line per row of a log, and what the rows cover. */
  record Expected(Path rules, Path log, List<String> lines, int nearTransitions, int zones) {
    void assertCovers(String... ruleIds) {
      for (String id : ruleIds) {
        assertThat(lines).as("some row is refused by %s", id)
            .anyMatch(l -> l.startsWith("false,") && List.of(l.substring(6).split(";")).contains(id));
      }
      assertThat(lines).as("some row is admitted").anyMatch(l -> l.startsWith("true"));
      assertThat(nearTransitions).as("rows within an hour of their zone's daylight-saving change").isPositive();
      assertThat(zones).as("distinct zones in the log").isGreaterThanOrEqualTo(6);
    }
  }

  /**
   * Writes a log of {@code rows} rows from {@link Traffic} with zones, on the policy replay reads
   * from {@code rules}, and the oracle's decision of each row in log order at its own time.
   */
  static Expected logAndOracle(Path rules, Path log, long seed, int rows) throws IOException {
    Policy policy = PolicyParser.parseFile(rules).get(0); // what replay reads is what the oracle models
    assertThat(BatchDecider.everyRuleKeyedByRecipient(List.of(policy))).as("rows split by recipient").isTrue();
    Traffic traffic = new Traffic(seed, policy, Traffic.Options.SEND_LOG.withZones(true), START);
    Oracle oracle = new Oracle(policy);
    List<String> lines = new ArrayList<>(rows);
    Set<ZoneId> zones = new HashSet<>();
    int nearTransitions = 0;
    try (Writer w = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
      w.write("timestamp,recipient,channel,sender,category,content,cost,timeZone,priority,override\n");
      for (int i = 0; i < rows; i++) {
        Traffic.Decide d = (Traffic.Decide) traffic.next();
        Message m = d.message();
        w.write(d.time() + "," + m.recipient() + "," + m.channel() + "," + nz(m.sender()) + "," + m.category() + ","
            + nz(m.content()) + "," + m.cost() + "," + (m.timeZone() == null ? "" : m.timeZone().getId()) + ","
            + m.priority() + "," + m.override() + "\n");
        Oracle.Verdict v = oracle.decide(m, d.time(), false, null, "row" + i);
        lines.add(v.expected().allowed() + "," + String.join(";", v.expected().blockedBy()));
        ZoneId zone = policy.zoneOf(m);
        zones.add(zone);
        if (nearTransition(zone, d.time())) {
          nearTransitions++;
        }
      }
    }
    return new Expected(rules, log, lines, nearTransitions, zones.size());
  }

  private static boolean nearTransition(ZoneId zone, long t) {
    ZoneOffsetTransition next = zone.getRules().nextTransition(Instant.ofEpochMilli(t - 3_600_000L));
    return next != null && next.getInstant().toEpochMilli() <= t + 3_600_000L;
  }

  /**
   * Replays the log on {@code threads} decider(s) (2: rows split by recipient; on Redis, every
   * recipient's chain in flight at once) on {@code store} (null: the embedded one), and holds the
   * decisions file to the oracle's lines; returns the rows compared.
   */
  static int assertReplayMatches(Expected expected, int threads, String store) throws IOException {
    Path decisions = expected.log().resolveSibling("decisions-" + threads + ".txt");
    List<String> args = new ArrayList<>(List.of("replay", "--rules", expected.rules().toString(), "--log",
        expected.log().toString(), "--decisions", decisions.toString(), "--progress-every", "0"));
    if (store != null) {
      args.addAll(List.of("--store", store));
    }
    String before = System.getProperty("fcap.replay.oneThread");
    System.setProperty("fcap.replay.oneThread", Boolean.toString(threads == 1));
    CliRun run;
    try {
      run = fcap(args.toArray(String[]::new));
    } finally {
      if (before == null) {
        System.clearProperty("fcap.replay.oneThread");
      } else {
        System.setProperty("fcap.replay.oneThread", before);
      }
    }
    assertThat(run.exit()).as(run.err()).isZero();
    List<String> actual = Files.readAllLines(decisions);
    List<String> want = expected.lines();
    assertThat(actual).hasSameSizeAs(want);
    List<String> differences = new ArrayList<>();
    long overAdmissions = 0;
    for (int i = 0; i < want.size(); i++) {
      if (!actual.get(i).equals(want.get(i))) {
        differences.add("row " + (i + 2) + ": replay " + actual.get(i) + ", oracle " + want.get(i));
        overAdmissions += actual.get(i).startsWith("true") ? 1 : 0;
      }
    }
    assertThat(differences).as("%d rows differ (%d over-admissions) on %d thread(s), store %s; first: %s",
        differences.size(), overAdmissions, threads, store, differences.subList(0, Math.min(10, differences.size())))
        .isEmpty();
    assertThat(want).as("the log makes the rules refuse something").anyMatch(e -> e.startsWith("false"));
    return want.size();
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
