package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Policy;
import dev.fcap.model.RuleOutcome;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.memory.MemoryStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replay reads its decisions as verdict bits ({@link BatchVerdicts}), not as {@link Decision}s:
 * its decisions file and its summary must be those built from the {@code Decision} of each row,
 * decided one by one on one thread. The policies are built to reach what the seed policy does not:
 * two tenants, a policy of 70 rules (its rules past the 64th in a second word of bits), shadow rules
 * that refuse (in the summary, not in the decisions file), rules that apply to some channels only,
 * and, in the second file, a rule keyed by the channel alone (a shared partition: one decider, and
 * refusals there release what the recipient's partition recorded).
 */
class ReplayVerdictsTest {
  @TempDir Path dir;

  @Test
  void manyRulesTwoTenantsAndShadowRules() throws IOException {
    check(rules(false), 1);
  }

  @Test
  void aRuleKeyedWithoutTheRecipient() throws IOException {
    check(rules(true), 2);
  }

  private void check(String yaml, long seed) throws IOException {
    Path rules = Files.writeString(dir.resolve("rules-" + seed + ".yaml"), yaml);
    Path log = log(dir.resolve("log-" + seed + ".csv"), seed, 30_000);
    List<Policy> policies = PolicyParser.parseFile(rules);
    Reference expected = reference(policies, log);
    assertThat(expected.lines).as("the log reaches the limits").contains("true,").anyMatch(l -> l.startsWith("false,"));
    Path out = dir.resolve("decisions-" + seed + ".txt");
    CliRun run = CliRun.fcap("replay", "--rules", rules.toString(), "--log", log.toString(), "--decisions",
        out.toString(), "--progress-every", "0", "--json");
    assertThat(run.exit()).as(run.err()).isZero();
    assertThat(ReplayOracleTest.mismatches(Files.readAllLines(out), expected.lines)).isEmpty();
    JsonNode summary = new ObjectMapper().readTree(run.out());
    assertThat(summary.get("rows").asLong()).isEqualTo(expected.lines.size());
    assertThat(summary.get("admitted").asLong()).isEqualTo(expected.lines.stream().filter(l -> l.startsWith("true")).count());
    Map<String, String> got = new TreeMap<>();
    for (JsonNode r : summary.get("rules")) {
      JsonNode blocked = r.has("blocked") ? r.get("blocked") : r.get("wouldHaveBlocked");
      got.put(r.get("tenant").asText() + "/" + r.get("id").asText(), r.get("applied").asLong() + " " + blocked.asLong());
    }
    assertThat(got).isEqualTo(expected.counts);
    assertThat(expected.counts).as("rules past the 64th and shadow rules refuse")
        .anySatisfy((id, counts) -> assertThat(id).isEqualTo("default/r69"))
        .anySatisfy((id, counts) -> assertThat(id + " " + counts).matches("default/shadow-\\d+ \\d+ [1-9]\\d*"));
  }

  /**
   * The decisions file's lines and the per-rule counts ("applied blocked") from each row's
   * {@code Decision}, decided one row after the other on one thread.
   */
  record Reference(List<String> lines, Map<String, String> counts) {}

  static Reference reference(List<Policy> policies, Path log) throws IOException {
    ReplayCommand.ReplayClock clock = new ReplayCommand.ReplayClock();
    List<String> lines = new java.util.ArrayList<>();
    Map<String, long[]> counts = new TreeMap<>();
    for (Policy p : policies) {
      p.rules().forEach(r -> counts.put(p.tenant() + "/" + r.id(), new long[2]));
    }
    try (Engine engine = Engine.builder(MemoryStore.builder().clock(clock).build()).clock(clock).callerTime(true)
        .releaseHorizon(java.time.Duration.ZERO).policies(policies).build();
        SendLog rows = new SendLog(Files.newBufferedReader(log, StandardCharsets.UTF_8))) {
      for (SendLog.Row row = rows.next(); row != null; row = rows.next()) {
        clock.time = row.time();
        Decision d = engine.decideAt(row.message(), row.time()).join();
        lines.add(d.allowed() + "," + String.join(";", d.blockedBy()));
        for (RuleOutcome o : d.rules()) {
          long[] c = counts.get(row.message().tenant() + "/" + o.id());
          c[0]++;
          c[1] += o.allowed() ? 0 : 1;
        }
      }
    }
    Map<String, String> asText = new TreeMap<>();
    counts.forEach((id, c) -> asText.put(id, c[0] + " " + c[1]));
    return new Reference(lines, asText);
  }

  /**
   * Tenant "default": 70 rules keyed by the recipient (some with the content, some for one channel
   * only, every seventh in shadow mode), limits of 2-40 over 10 s to 1 h; tenant "acme": the seed's
   * shape plus, with {@code shared}, a rule over the whole channel.
   */
  private static String rules(boolean shared) {
    StringBuilder y = new StringBuilder("policies:\n  - tenant: default\n    rules:\n");
    Random random = new Random(shared ? 2 : 1);
    for (int i = 0; i < 70; i++) {
      boolean shadow = i % 7 == 3;
      y.append("      - id: ").append(shadow ? "shadow-" + i : "r" + i).append('\n')
          .append("        limit: ").append(2 + random.nextInt(39)).append('\n')
          .append("        window: ").append(List.of("10s", "1m", "5m", "1h").get(random.nextInt(4))).append('\n')
          .append("        key: ").append(random.nextBoolean() ? "[recipient, content]" : "[recipient]").append('\n');
      if (random.nextInt(3) == 0) {
        y.append("        match: {channel: [").append(random.nextBoolean() ? "sms" : "push").append("]}\n");
      }
      if (shadow) {
        y.append("        mode: shadow\n");
      }
    }
    y.append("  - tenant: acme\n    rules:\n")
        .append("      - {id: per-minute, limit: 5, window: 1m, key: [recipient]}\n")
        .append("      - {id: same-content, limit: 2, window: 1m, key: [recipient, content]}\n")
        .append("      - {id: shadow-day, limit: 8, window: 24h, key: [recipient], mode: shadow}\n");
    if (shared) {
      y.append("      - {id: channel-per-second, limit: 30, window: 1s, key: [channel]}\n");
    }
    return y.toString();
  }

  /** Rows over an hour for 60 recipients of two tenants, in bursts, on two channels and four contents. */
  private static Path log(Path file, long seed, int rows) throws IOException {
    Random random = new Random(seed);
    StringBuilder csv = new StringBuilder("timestamp,tenant,recipient,channel,content\n");
    long t = 1_793_491_200_000L;
    for (int i = 0; i < rows; i++) {
      t += random.nextInt(10) == 0 ? random.nextInt(20_000) : random.nextInt(50);
      csv.append(t).append(',').append(random.nextInt(3) == 0 ? "acme" : "default").append(",+86139")
          .append(random.nextInt(60)).append(',').append(random.nextBoolean() ? "sms" : "push").append(",offer ")
          .append(random.nextInt(4)).append('\n');
    }
    Files.writeString(file, csv, StandardCharsets.UTF_8);
    return file;
  }
}
