package dev.fcap.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.policy.PolicyParser;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class SeedRulesTest {

  /** The seed declared in code is the seed file, rule for rule (descriptions aside). */
  @Test
  void theDeclaredSeedIsTheSeedFile() throws Exception {
    List<Policy> file = PolicyParser.parseFile(Path.of("../examples/rules.yaml"));
    assertThat(file).hasSize(1);
    Policy seed = file.get(0);
    assertThat(seed.tenant()).isEqualTo(SeedRules.POLICY.tenant());
    assertThat(seed.rules().stream().map(SeedRulesTest::withoutDescription).toList())
        .isEqualTo(SeedRules.POLICY.rules());
  }

  private static Rule withoutDescription(Rule r) {
    return new Rule(r.id(), null, r.limit(), r.window(), r.key(), r.match(), r.exempt(), r.algorithm(), r.precision(),
        r.mode(), r.zone());
  }
}
