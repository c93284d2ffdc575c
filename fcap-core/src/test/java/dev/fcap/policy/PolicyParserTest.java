package dev.fcap.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Algorithm;
import dev.fcap.model.Dimension;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PolicyParserTest {

  private static PolicyError onlyError(String yaml) {
    try {
      PolicyParser.parse(yaml);
    } catch (PolicyException e) {
      assertThat(e.errors()).hasSize(1);
      return e.errors().get(0);
    }
    throw new AssertionError("expected the policy to be refused");
  }

  private static String rule(String body) {
    return "policies:\n  - tenant: t1\n    rules:\n      - id: r1\n" + body.indent(8);
  }

  @Test
  void theSeedPolicyParses() throws Exception {
    List<Policy> policies = PolicyParser.parseFile(Path.of("../examples/rules.yaml"));
    assertThat(policies).hasSize(1);
    Policy seed = policies.get(0);
    assertThat(seed.tenant()).isEqualTo("default");
    assertThat(seed.rules()).extracting(Rule::id)
        .containsExactly("recipient-per-minute", "recipient-per-day", "same-content-per-59s", "same-content-per-59m");
    Rule content = seed.rule("same-content-per-59s").orElseThrow();
    assertThat(content.limit()).isEqualTo(2);
    assertThat(content.window()).isEqualTo(Duration.ofSeconds(59));
    assertThat(content.key()).containsExactly(Dimension.RECIPIENT, Dimension.CONTENT);
    assertThat(content.algorithm()).isEqualTo(Algorithm.SLIDING_LOG);
    assertThat(content.mode()).isEqualTo(Mode.ENFORCE);
  }

  @Test
  void everyFieldParsesAndWritesBack() {
    String yaml = rule("""
        description: per channel, marketing only
        limit: 3
        window: 1h30m
        key: [recipient, channel, "attr:campaign"]
        match: {category: [marketing, promo], "attr:region": eu}
        exempt: {sender: [bank]}
        algorithm: sliding-counter
        precision: 30
        mode: shadow
        """);
    Policy p = PolicyParser.parse(yaml).get(0);
    Rule r = p.rules().get(0);
    assertThat(r.window()).isEqualTo(Duration.ofMinutes(90));
    assertThat(r.key()).containsExactly(Dimension.RECIPIENT, Dimension.CHANNEL, Dimension.attribute("campaign"));
    assertThat(r.match().values().get(Dimension.CATEGORY)).isEqualTo(Set.of("marketing", "promo"));
    assertThat(r.match().values().get(Dimension.attribute("region"))).isEqualTo(Set.of("eu"));
    assertThat(r.precision()).isEqualTo(30);
    assertThat(r.mode()).isEqualTo(Mode.SHADOW);
    assertThat(PolicyParser.parse(PolicyParser.toYaml(List.of(p)))).containsExactly(p);
  }

  @Test
  void errorsNameThePolicyTheRuleAndTheField() {
    assertThat(onlyError(rule("limit: 0\nwindow: 1m\nkey: [recipient]")))
        .isEqualTo(new PolicyError("t1", "r1", "limit", "limit must be an integer from 1 to 1000000000, got 0"));
    assertThat(onlyError(rule("limit: 1\nwindow: 1 minute\nkey: [recipient]")).field()).isEqualTo("window");
    assertThat(onlyError(rule("limit: 1\nwindow: 401d\nkey: [recipient]")).message()).contains("400 days");
    assertThat(onlyError(rule("limit: 1\nwindow: 0s\nkey: [recipient]")).field()).isEqualTo("window");
    assertThat(onlyError(rule("limit: 1\nwindow: 1m\nkey: [recipient, phone]")).message()).contains("unknown dimension");
    assertThat(onlyError(rule("limit: 1\nwindow: 1m\nkey: [recipient]\nalgorithm: token-bucket")).field())
        .isEqualTo("algorithm");
    assertThat(onlyError(rule("limit: 1\nwindow: 1m\nkey: [recipient]\nmode: off")).field()).isEqualTo("mode");
    assertThat(onlyError(rule("limit: 1\nwindow: 1m\nkey: [recipient]\nlimt: 2")).field()).isEqualTo("limt");
    assertThat(onlyError(rule("limit: 1\nwindow: 1m\nkey: [recipient]\nmatch: {content: [x]}")).field())
        .isEqualTo("match.content");
    assertThat(onlyError(rule("limit: 1\nwindow: 1m\nkey: [recipient]\nprecision: 10")).field()).isEqualTo("precision");
    assertThat(onlyError(rule("limit: 1\nwindow: 1h\nkey: [recipient]\nalgorithm: fixed-window\nzone: Asia/Shanghai")).field())
        .isEqualTo("zone");
    assertThat(onlyError(rule("limit: 1\nwindow: 1d\nkey: [recipient]\nalgorithm: fixed-window\nzone: Mars/Base")).message())
        .contains("unknown time zone");
    assertThat(onlyError(rule("window: 1m\nkey: [recipient]")).message()).isEqualTo("limit is required");
    assertThat(onlyError(rule("limit: 1\nwindow: 1m")).field()).isEqualTo("key");
  }

  @Test
  void duplicateIdsAndTenantsAreRefused() {
    String dupRules = "policies:\n  - tenant: t1\n    rules:\n"
        + "      - {id: a, limit: 1, window: 1m, key: [recipient]}\n"
        + "      - {id: a, limit: 2, window: 1m, key: [recipient]}\n";
    assertThat(onlyError(dupRules)).isEqualTo(new PolicyError("t1", "a", "id", "duplicate rule id"));
    String dupTenants = "policies:\n  - {tenant: t1, rules: []}\n  - {tenant: t1, rules: []}\n";
    assertThat(onlyError(dupTenants).message()).contains("more than once");
  }

  @Test
  void anInvalidPolicyIsRefusedWholeWithEveryError() {
    String yaml = "policies:\n  - tenant: t1\n    rules:\n"
        + "      - {id: ok, limit: 1, window: 1m, key: [recipient]}\n"
        + "      - {id: bad1, limit: -1, window: 1m, key: [recipient]}\n"
        + "      - {id: bad2, limit: 1, window: soon, key: [recipient]}\n";
    assertThatThrownBy(() -> PolicyParser.parse(yaml)).isInstanceOfSatisfying(PolicyException.class, e -> {
      assertThat(e.errors()).extracting(PolicyError::ruleId).containsExactly("bad1", "bad2");
      assertThat(e.getMessage()).contains("policy 't1', rule 'bad1', field 'limit'");
    });
  }

  @Test
  void aSlidingLogAboveTenMillionIsRefusedAndNamesTheAlternatives() {
    String tooLarge = "policies:\n  - tenant: t1\n    rules:\n"
        + "      - {id: huge, limit: 1000000000, window: 1d, key: [channel]}\n";
    PolicyError e = onlyError(tooLarge);
    assertThat(e.field()).isEqualTo("limit");
    assertThat(e.message()).contains("at most 10000000").contains("sliding-counter").contains("gcra");
    String alternatives = "policies:\n  - tenant: t1\n    rules:\n"
        + "      - {id: top, limit: 10000000, window: 1h, key: [channel]}\n"
        + "      - {id: counter, limit: 1000000000, window: 1d, key: [channel], algorithm: sliding-counter}\n"
        + "      - {id: meter, limit: 1000000000, window: 1d, key: [sender], algorithm: gcra}\n";
    assertThat(PolicyParser.parse(alternatives).get(0).rules()).hasSize(3);
  }

  @Test
  void malformedYamlSaysWhere() {
    PolicyError e = onlyError("policies:\n  - tenant: [unclosed\n");
    assertThat(e.message()).startsWith("not valid YAML").contains("line");
    assertThatThrownBy(() -> PolicyParser.parse("rules: []")).isInstanceOfSatisfying(PolicyException.class,
        ex -> assertThat(ex.errors()).extracting(PolicyError::field).containsExactly("rules", "policies"));
  }

  @Test
  void aKeyGivenTwiceIsRefusedNotTakenFromItsLastOccurrence() {
    PolicyError e = onlyError("""
        policies:
          - tenant: default
            rules:
              - id: r1
                limit: 3
                window: 1m
                key: [recipient]
                limit: 300
        """);
    assertThat(e.message()).startsWith("not valid YAML").contains("Duplicate field 'limit'").contains("line 8");
  }

  @Test
  void durationsParseAndFormat() {
    assertThat(Durations.parse("59s")).contains(Duration.ofSeconds(59));
    assertThat(Durations.parse("1h30m")).contains(Duration.ofMinutes(90));
    assertThat(Durations.parse("500ms")).contains(Duration.ofMillis(500));
    assertThat(Durations.parse("1m 30s")).isEmpty();
    assertThat(Durations.parse("m")).isEmpty();
    assertThat(Durations.parse("")).isEmpty();
    assertThat(Durations.format(Duration.ofHours(24))).isEqualTo("24h");
    assertThat(Durations.format(Duration.ofDays(2))).isEqualTo("2d");
    assertThat(Durations.format(Duration.ofSeconds(59))).isEqualTo("59s");
    assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
  }

  @Test
  void headroomIsRefusedWithTheFieldNamedWhenItCannotBeKept() {
    String base = "limit: 10\nwindow: 1d\nkey: [recipient]\nheadroom: ";
    assertThat(onlyError(rule(base + "{normal: 11}")))
        .extracting(PolicyError::field, PolicyError::message)
        .containsExactly("headroom.normal", "headroom must be an integer from 0 to the limit (10), got 11");
    assertThat(onlyError(rule(base + "{low: -1}")).field()).isEqualTo("headroom.low");
    assertThat(onlyError(rule(base + "{low: 2.5}")).field()).isEqualTo("headroom.low");
    assertThat(onlyError(rule(base + "{urgent: 2}")).message()).isEqualTo("unknown priority 'urgent'; one of high, normal, low");
    assertThat(onlyError(rule(base + "{critical: 2}")).message()).contains("no class is above it");
    assertThat(onlyError(rule(base + "{normal: 5, low: 2}")).message())
        .isEqualTo("a lower priority must keep at least the headroom of a higher one (high <= normal <= low), got high 0, "
            + "normal 5, low 2");
    assertThat(onlyError(rule(base + "5")).field()).isEqualTo("headroom");
    assertThat(onlyError("policies:\n  - tenant: t1\n    rules:\n      - id: w\n        headroom: {low: 1}\n"
        + "        sendWindow: {allow: [{from: \"08:00\", to: \"21:00\"}]}\n").field()).isEqualTo("headroom");
  }
}
