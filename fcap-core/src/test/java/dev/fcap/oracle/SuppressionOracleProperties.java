package dev.fcap.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Suppression;
import dev.fcap.store.ManualClock;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.memory.MemoryStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Suppression lists held to the oracle: random traffic (priorities, headroom, count-only rules and
 * overrides among it) on a random policy while entries come and go, with channel and category
 * scopes and expiries. Whether a message is suppressed is stated here, apart from the engine: an
 * entry of its tenant and recipient whose channels and categories (empty: all) hold the message's,
 * not expired at the decision's time. A suppressed message must be refused with {@code suppressed}
 * and the entry's reason, {@code sendAt} at the expiry (or -1, or later when a rule refuses until
 * later), and change no count, so the oracle never sees it; every other decision is judged by the
 * oracle as usual, whose counts would differ at once if a suppressed message had been recorded.
 */
class SuppressionOracleProperties {
  private static final int STEPS = 6_000;
  private static final String[] CHANNELS = {"sms", "push", "email"};
  private static final String[] CATEGORIES = {"service", "promo", "marketing", "otp"};

  @Property(tries = 8)
  void suppressedMessagesAreRefusedAndCountNothingAndTheRestMatchTheOracle(@ForAll long seed) {
    Traffic traffic = new Traffic(seed, Traffic.randomPolicy(seed, 12, false), Traffic.Options.SEND_LOG,
        ManualClock.START);
    Oracle oracle = new Oracle(traffic.policy());
    SplittableRandom random = new SplittableRandom(seed ^ 0x5abbL);
    Map<String, Suppression> entries = new HashMap<>(); // tenant/recipient -> entry
    List<String> seen = new ArrayList<>();
    long suppressed = 0;
    long judged = 0;
    ManualClock clock = new ManualClock();
    try (Engine engine = Engine.builder(MemoryStore.builder().clock(clock).segments(2).build()).clock(clock)
        .callerTime(true).policy(traffic.policy()).build()) {
      SuppressionList list = engine.suppressions().orElseThrow();
      for (int s = 0; s < STEPS; s++) {
        Traffic.Decide d = (Traffic.Decide) traffic.next();
        Message m = d.message();
        String key = m.tenant() + "/" + m.recipient();
        if (!seen.contains(key)) {
          seen.add(key);
        }
        if (random.nextInt(40) == 0) { // an entry comes or goes
          String[] tr = seen.get(random.nextInt(seen.size())).split("/", 2);
          if (random.nextInt(3) == 0) {
            list.remove(tr[0], tr[1]);
            entries.remove(tr[0] + "/" + tr[1]);
          } else {
            Suppression e = new Suppression(tr[1], some(random, CHANNELS), some(random, CATEGORIES),
                "reason " + s, "oracle", d.time(), random.nextBoolean() ? Suppression.NEVER
                : d.time() + 1 + random.nextInt(600_000));
            list.put(tr[0], e);
            entries.put(tr[0] + "/" + tr[1], e);
          }
        }
        Decision actual = engine.decideAt(m, d.time()).join();
        Suppression e = entries.get(key);
        if (e != null && inScope(e, m, d.time())) {
          suppressed++;
          assertThat(actual.allowed()).as("seed %d step %d: %s suppressed by %s", seed, s, m, e).isFalse();
          assertThat(actual.blockedBy()).contains(Suppression.BLOCKED_BY);
          assertThat(actual.suppressedReason()).isEqualTo(e.reason());
          if (e.expiresAt() == Suppression.NEVER) {
            assertThat(actual.sendAt()).isEqualTo(-1);
          } else {
            assertThat(actual.sendAt()).satisfiesAnyOf(t -> assertThat(t).isGreaterThanOrEqualTo(e.expiresAt()),
                t -> assertThat(t).isEqualTo(-1));
          }
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

  /** The entry's scope, stated apart from {@code Suppression.covers}. */
  private static boolean inScope(Suppression e, Message m, long time) {
    boolean live = e.expiresAt() == Suppression.NEVER || time < e.expiresAt();
    boolean channel = e.channels().isEmpty() || e.channels().contains(m.channel());
    boolean category = e.categories().isEmpty() || e.categories().contains(m.category());
    return live && channel && category;
  }

  /** No values (every one) half of the time, else one or two of them. */
  private static List<String> some(SplittableRandom random, String[] values) {
    if (random.nextBoolean()) {
      return List.of();
    }
    List<String> out = new ArrayList<>(List.of(values[random.nextInt(values.length)]));
    String other = values[random.nextInt(values.length)];
    if (random.nextBoolean() && !out.contains(other)) {
      out.add(other);
    }
    return out;
  }
}
