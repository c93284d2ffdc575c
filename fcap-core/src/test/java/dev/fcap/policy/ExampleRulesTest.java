package dev.fcap.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneId;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every rules file under examples/ parses, and writes back as itself. */
class ExampleRulesTest {
  private static final Path EXAMPLES = Path.of("../examples");

  @Test
  void everyExampleParsesAndRoundTrips() throws IOException {
    List<Path> files;
    try (Stream<Path> list = Files.list(EXAMPLES)) {
      files = list.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
    assertThat(files).extracting(p -> p.getFileName().toString()).contains("rules.yaml", "local-time.yaml");
    for (Path file : files) {
      List<Policy> policies = PolicyParser.parseFile(file);
      assertThat(policies).as(file.toString()).isNotEmpty();
      assertThat(PolicyParser.parse(PolicyParser.toYaml(policies))).as(file.toString()).isEqualTo(policies);
    }
  }

  @Test
  void theLocalTimeExampleHasQuietHoursAndLocalCalendarCaps() throws IOException {
    Policy p = PolicyParser.parseFile(EXAMPLES.resolve("local-time.yaml")).get(0);
    assertThat(p.timeZone()).isEqualTo(ZoneId.of("America/New_York"));
    assertThat(p.rule("quiet-hours").map(Rule::isSendWindow)).contains(true);
    assertThat(p.rules()).filteredOn(Rule::recipientZone).extracting(Rule::calendar)
        .containsExactly(CalendarUnit.DAY, CalendarUnit.WEEK, CalendarUnit.MONTH);
  }
}
