package dev.fcap.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Suppression;
import dev.fcap.store.ManualClock;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.memory.MemoryStore;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Suppression lists held to the oracle: random traffic (priorities, headroom, count-only rules and
 * overrides among it) on a random policy while entries come and go ({@link SuppressionChurn}:
 * channel and category scopes, expiries), which states apart from the engine which message is
 * suppressed and how its refusal reads. A suppressed message changes no count, so the oracle never
 * sees it; every other decision is judged by the oracle as usual, whose counts would differ at once
 * if a suppressed message had been recorded. (OracleRun runs the same churn beside the full
 * traffic, releases and edits among it, on every store.)
 */
class SuppressionOracleProperties {
  private static final int STEPS = 6_000;

  @Property(tries = 8)
  void suppressedMessagesAreRefusedAndCountNothingAndTheRestMatchTheOracle(@ForAll long seed) {
    Traffic traffic = new Traffic(seed, Traffic.randomPolicy(seed, 12, false), Traffic.Options.SEND_LOG,
        ManualClock.START);
    Oracle oracle = new Oracle(traffic.policy());
    SuppressionChurn churn = new SuppressionChurn(seed, 40);
    long suppressed = 0;
    long judged = 0;
    ManualClock clock = new ManualClock();
    try (Engine engine = Engine.builder(MemoryStore.builder().clock(clock).segments(2).build()).clock(clock)
        .callerTime(true).policy(traffic.policy()).build()) {
      SuppressionList list = engine.suppressions().orElseThrow();
      for (int s = 0; s < STEPS; s++) {
        Traffic.Decide d = (Traffic.Decide) traffic.next();
        Message m = d.message();
        churn.beforeDecision(list, m.tenant(), m, d.time());
        Decision actual = engine.decideAt(m, d.time()).join();
        Suppression e = churn.covering(m.tenant(), m, d.time());
        if (e != null) {
          suppressed++;
          assertThat(SuppressionChurn.judge(actual, e)).as("seed %d step %d: %s suppressed by %s", seed, s, m, e)
              .isEmpty();
          continue; // nothing counted: the oracle never sees it
        }
        judged++;
        Oracle.Verdict v = oracle.decide(m, d.time(), false, actual, actual.decisionId());
        assertThat(v.overAdmission()).as("seed %d step %d: %s", seed, s, v.mismatches()).isFalse();
        assertThat(v.matches()).as("seed %d step %d: %s", seed, s, v.mismatches()).isTrue();
      }
    }
    assertThat(suppressed).as("suppressed decisions").isPositive();
    assertThat(judged).as("decisions judged by the oracle").isGreaterThan(STEPS / 2);
  }
}
