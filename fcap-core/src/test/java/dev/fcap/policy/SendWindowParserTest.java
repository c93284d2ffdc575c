package dev.fcap.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Condition;
import dev.fcap.model.Dimension;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.SendWindow;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SendWindowParserTest {

  private static List<PolicyError> errors(String yaml) {
    try {
      PolicyParser.parse(yaml);
    } catch (PolicyException e) {
      return e.errors();
    }
    throw new AssertionError("expected the policy to be refused");
  }

  private static PolicyError onlyError(String yaml) {
    List<PolicyError> errors = errors(yaml);
    assertThat(errors).hasSize(1);
    return errors.get(0);
  }

  private static String rule(String body) {
    return "policies:\n  - tenant: t1\n    rules:\n      - id: r1\n" + body.indent(8);
  }

  private static String window(String body) {
    return rule("sendWindow:\n" + body.indent(2));
  }

  @Test
  void aSendWindowParsesAndWritesBack() {
    Policy p = PolicyParser.parse("""
        policies:
          - tenant: t1
            timeZone: America/New_York
            rules:
              - id: quiet-hours
                sendWindow:
                  zone: recipient
                  allow:
                    - {days: [mon, tue, wed, thu, fri], from: "08:00", to: "21:00"}
                    - {days: [sat, sun], from: "22:30", to: "06:15"}
                  closed: ["2026-12-25", "2026-01-01"]
                match: {category: [marketing]}
                mode: shadow
        """).get(0);
    assertThat(p.timeZone()).isEqualTo(ZoneId.of("America/New_York"));
    Rule r = p.rules().get(0);
    assertThat(r.isSendWindow()).isTrue();
    assertThat(r.mode()).isEqualTo(Mode.SHADOW);
    assertThat(r.match().values().get(Dimension.CATEGORY)).isEqualTo(Set.of("marketing"));
    SendWindow w = r.sendWindow();
    assertThat(w.recipientZone()).isTrue();
    assertThat(w.allow()).containsExactly(
        new SendWindow.Interval(EnumSet.range(DayOfWeek.MONDAY, DayOfWeek.FRIDAY), LocalTime.of(8, 0),
            LocalTime.of(21, 0)),
        new SendWindow.Interval(EnumSet.of(DayOfWeek.SATURDAY, DayOfWeek.SUNDAY), LocalTime.of(22, 30),
            LocalTime.of(6, 15)));
    assertThat(w.allow().get(1).spansMidnight()).isTrue();
    assertThat(w.closed()).containsExactly(LocalDate.of(2026, 1, 1), LocalDate.of(2026, 12, 25));
    assertThat(PolicyParser.parse(PolicyParser.toYaml(List.of(p)))).containsExactly(p);
    assertThat(PolicyParser.parseTree(PolicyParser.toTree(List.of(p)))).containsExactly(p);
  }

  @Test
  void aWindowWithAFixedZoneAndEveryDayWritesBack() {
    Policy p = PolicyParser.parse(window("""
        zone: Asia/Kathmandu
        allow: [{from: "09:00", to: "17:45"}]
        """)).get(0);
    SendWindow w = p.rules().get(0).sendWindow();
    assertThat(w.zone()).isEqualTo(ZoneId.of("Asia/Kathmandu"));
    assertThat(w.allow().get(0).days()).isEqualTo(EnumSet.allOf(DayOfWeek.class));
    assertThat(w.closed()).isEmpty();
    assertThat(p.timeZone()).isNull();
    assertThat(PolicyParser.toTree(p.rules().get(0)).toString())
        .isEqualTo("{\"id\":\"r1\",\"sendWindow\":{\"zone\":\"Asia/Kathmandu\",\"allow\":[{\"from\":\"09:00\","
            + "\"to\":\"17:45\"}]}}");
    assertThat(PolicyParser.parse(PolicyParser.toYaml(List.of(p)))).containsExactly(p);
  }

  @Test
  void theZoneDefaultsToTheRecipients() {
    Rule r = PolicyParser.parse(window("allow: [{from: \"08:00\", to: \"21:00\"}]")).get(0).rules().get(0);
    assertThat(r.sendWindow().recipientZone()).isTrue();
    assertThat(r.match()).isEqualTo(Condition.ANY);
  }

  @Test
  void eachBadFieldOfAWindowIsNamed() {
    assertThat(onlyError(window("allow: [{from: \"08:00\", to: \"08:00\"}]")).field())
        .isEqualTo("sendWindow.allow[0].to");
    assertThat(onlyError(window("allow: [{from: \"08:00\", to: \"08:00\"}]")).message()).contains("must not be empty");
    assertThat(onlyError(window("allow: [{from: \"08:00\", to: \"21:00\"}, {days: [mon, funday], from: \"08:00\","
        + " to: \"09:00\"}]"))).isEqualTo(new PolicyError("t1", "r1", "sendWindow.allow[1].days",
            "unknown day \"funday\"; use mon, tue, wed, thu, fri, sat, sun"));
    assertThat(onlyError(window("allow: [{days: [mon, mon], from: \"08:00\", to: \"21:00\"}]")).message())
        .contains("appears twice");
    assertThat(onlyError(window("allow: [{days: [], from: \"08:00\", to: \"21:00\"}]")).field())
        .isEqualTo("sendWindow.allow[0].days");
    assertThat(onlyError(window("allow: [{from: \"8:00\", to: \"21:00\"}]")).field())
        .isEqualTo("sendWindow.allow[0].from");
    assertThat(onlyError(window("allow: [{from: \"08:00\", to: \"24:00\"}]")).field())
        .isEqualTo("sendWindow.allow[0].to");
    assertThat(onlyError(window("allow: [{from: \"08:60\", to: \"21:00\"}]")).message()).contains("\"HH:MM\"");
    assertThat(onlyError(window("allow: [{to: \"21:00\"}]")))
        .isEqualTo(new PolicyError("t1", "r1", "sendWindow.allow[0].from", "from is required, a local time \"HH:MM\""));
    assertThat(onlyError(window("allow: [{from: \"08:00\", to: \"21:00\", till: \"22:00\"}]")).field())
        .isEqualTo("sendWindow.allow[0].till");
    assertThat(onlyError(window("allow: []")).field()).isEqualTo("sendWindow.allow");
    assertThat(onlyError(window("zone: recipient")).field()).isEqualTo("sendWindow.allow");
    assertThat(onlyError(window("zone: Mars/Olympus\nallow: [{from: \"08:00\", to: \"21:00\"}]")))
        .isEqualTo(new PolicyError("t1", "r1", "sendWindow.zone", "unknown time zone 'Mars/Olympus'; use an IANA id "
            + "such as America/New_York or Asia/Kolkata or recipient"));
    assertThat(onlyError(window("allow: [{from: \"08:00\", to: \"21:00\"}]\nclosed: [\"2026-02-30\"]")).field())
        .isEqualTo("sendWindow.closed[0]");
    assertThat(onlyError(window("allow: [{from: \"08:00\", to: \"21:00\"}]\nclosed: [\"2026-12-25\", \"25/12\"]"))
        .field()).isEqualTo("sendWindow.closed[1]");
    assertThat(onlyError(window("allow: [{from: \"08:00\", to: \"21:00\"}]\nclosed: \"2026-12-25\"")).field())
        .isEqualTo("sendWindow.closed");
    assertThat(onlyError(window("allow: [{from: \"08:00\", to: \"21:00\"}]\nopen: [\"2026-12-25\"]")).field())
        .isEqualTo("sendWindow.open");
    assertThat(onlyError(rule("sendWindow: \"08:00-21:00\"")).field()).isEqualTo("sendWindow");
  }

  @Test
  void unquotedTimesReadAsTimes() {
    Rule r = PolicyParser.parse(window("allow: [{from: 10:00, to: 08:30}]")).get(0).rules().get(0);
    assertThat(r.sendWindow().allow().get(0).from()).isEqualTo(LocalTime.of(10, 0));
    assertThat(r.sendWindow().allow().get(0).to()).isEqualTo(LocalTime.of(8, 30));
    assertThat(onlyError(window("allow: [{from: 1000, to: \"21:00\"}]")).message()).contains("\"HH:MM\"");
  }

  @Test
  void everyErrorOfAWindowIsReported() {
    assertThat(errors(window("zone: Nowhere\nallow: [{days: [xyz], from: \"1\", to: \"2\"}]\nclosed: [\"x\"]")))
        .extracting(PolicyError::field).containsExactlyInAnyOrder("sendWindow.zone", "sendWindow.allow[0].days",
            "sendWindow.allow[0].from", "sendWindow.allow[0].to", "sendWindow.closed[0]");
  }

  @Test
  void aSendWindowRuleHasNoCounterFields() {
    assertThat(errors(rule("limit: 3\nwindow: 1d\nkey: [recipient]\nsendWindow: {allow: [{from: \"08:00\", "
        + "to: \"21:00\"}]}"))).extracting(PolicyError::field).containsExactly("limit", "window", "key");
    assertThat(onlyError(rule("algorithm: gcra\nsendWindow: {allow: [{from: \"08:00\", to: \"21:00\"}]}")).message())
        .contains("does not apply to a send-window rule");
  }

  @Test
  void thePolicyTimeZoneIsAnIanaId() {
    assertThat(onlyError("policies:\n  - tenant: t1\n    timeZone: Europe/Atlantis\n    rules: []\n"))
        .isEqualTo(new PolicyError("t1", null, "timeZone", "unknown time zone 'Europe/Atlantis'; use an IANA id such "
            + "as America/New_York or Asia/Kolkata"));
    assertThat(onlyError("policies:\n  - tenant: t1\n    timeZone: [UTC]\n    rules: []\n").field())
        .isEqualTo("timeZone");
    Policy p = PolicyParser.parse("policies:\n  - tenant: t1\n    timeZone: Asia/Kolkata\n    rules: []\n").get(0);
    assertThat(PolicyParser.toTree(p).get("timeZone").asText()).isEqualTo("Asia/Kolkata");
    assertThat(PolicyParser.parse(PolicyParser.toYaml(List.of(p)))).containsExactly(p);
  }

  @Test
  void fixedWindowsFollowTheRecipientsDayWeekAndMonth() {
    for (String w : List.of("1d", "24h", "1w", "1mo")) {
      Policy p = PolicyParser.parse(rule("limit: 3\nwindow: " + w + "\nkey: [recipient]\nalgorithm: fixed-window\n"
          + "zone: recipient\nmatch: {category: marketing}")).get(0);
      Rule r = p.rules().get(0);
      assertThat(r.recipientZone()).isTrue();
      assertThat(r.zone()).isNull();
      CalendarUnit unit = w.equals("1w") ? CalendarUnit.WEEK : w.equals("1mo") ? CalendarUnit.MONTH : CalendarUnit.DAY;
      assertThat(r.calendar()).isEqualTo(unit);
      assertThat(r.window()).isEqualTo(unit.nominal());
      assertThat(PolicyParser.toTree(r).get("zone").asText()).isEqualTo("recipient");
      assertThat(PolicyParser.parse(PolicyParser.toYaml(List.of(p)))).containsExactly(p);
    }
  }

  @Test
  void calendarWeeksAndMonthsTakeAFixedZoneOrNone() {
    Rule week = PolicyParser.parse(rule("limit: 10\nwindow: 1w\nkey: [recipient]\nalgorithm: fixed-window\n"
        + "zone: Europe/London")).get(0).rules().get(0);
    assertThat(week.calendar()).isEqualTo(CalendarUnit.WEEK);
    assertThat(week.zone()).isEqualTo(ZoneId.of("Europe/London"));
    assertThat(PolicyParser.toTree(week).get("window").asText()).isEqualTo("1w");
    Rule month = PolicyParser.parse(rule("limit: 30\nwindow: 1mo\nkey: [recipient]\nalgorithm: fixed-window"))
        .get(0).rules().get(0);
    assertThat(month.calendar()).isEqualTo(CalendarUnit.MONTH);
    assertThat(month.zone()).isNull();
    assertThat(month.recipientZone()).isFalse();
    Rule hours = PolicyParser.parse(rule("limit: 30\nwindow: 2d\nkey: [recipient]\nalgorithm: fixed-window"))
        .get(0).rules().get(0);
    assertThat(hours.calendar()).isNull();
    Rule sliding = PolicyParser.parse(rule("limit: 30\nwindow: 1d\nkey: [recipient]")).get(0).rules().get(0);
    assertThat(sliding.calendar()).isNull();
    assertThat(sliding.window()).isEqualTo(Duration.ofDays(1));
  }

  @Test
  void calendarMisuseIsRefused() {
    assertThat(onlyError(rule("limit: 3\nwindow: 1w\nkey: [recipient]"))).isEqualTo(new PolicyError("t1", "r1",
        "window", "window 1w is a calendar week and applies to fixed-window rules; for a sliding window write 7d"));
    assertThat(onlyError(rule("limit: 3\nwindow: 1mo\nkey: [recipient]\nalgorithm: gcra")).message())
        .contains("calendar month");
    assertThat(onlyError(rule("limit: 3\nwindow: 2d\nkey: [recipient]\nalgorithm: fixed-window\nzone: recipient")))
        .isEqualTo(new PolicyError("t1", "r1", "zone",
            "zone: recipient applies to fixed-window rules whose window is 1d, 1w or 1mo"));
    assertThat(onlyError(rule("limit: 3\nwindow: 1d\nkey: [recipient]\nzone: recipient")).field()).isEqualTo("zone");
    assertThat(onlyError(rule("limit: 3\nwindow: 1y\nkey: [recipient]\nalgorithm: fixed-window")).field())
        .isEqualTo("window");
  }
}
