package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Decision;
import dev.fcap.model.Headroom;
import dev.fcap.model.Message;
import dev.fcap.model.Priority;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcome;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.memory.MemoryStore;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Priority with reserved headroom, worked by hand on every algorithm: a day of 10 with
 * {@code headroom: {high: 1, normal: 3, low: 6}} admits low messages while the count stays at most 4,
 * normal at most 7, high at most 9 and critical at most 10; every class counts in the one counter;
 * each outcome says its bound, and a refused message's {@code sendAt} is when its own bound frees.
 */
class HeadroomTest {
  private static final long T0 = 1_767_225_600_000L; // 2026-01-01T00:00Z

  private static Engine engine(String algorithm) {
    String rules = """
        policies:
          - tenant: default
            rules:
              - id: per-day
                limit: 10
                window: 24h
                key: [recipient]
                algorithm: %s
                headroom: {high: 1, normal: 3, low: 6}
        """.formatted(algorithm);
    return Engine.builder(MemoryStore.builder().build()).callerTime(true).policies(PolicyParser.parse(rules)).build();
  }

  private static Message of(Priority p) {
    return Message.builder("+1").priority(p).build();
  }

  @ParameterizedTest
  @ValueSource(strings = {"sliding-log", "sliding-counter", "fixed-window", "gcra"})
  void eachClassFillsTheCounterUpToItsOwnBound(String algorithm) {
    try (Engine engine = engine(algorithm)) {
      long t = T0;
      // low fills to 4 of 10, then is refused; its outcome names its bound
      for (int i = 0; i < 4; i++) {
        assertThat(engine.decideAt(of(Priority.LOW), t += 10).join().allowed()).isTrue();
      }
      Decision low = engine.decideAt(of(Priority.LOW), t += 10).join();
      assertThat(low.allowed()).isFalse();
      RuleOutcome o = low.rules().get(0);
      assertThat(o.bound()).isEqualTo(4);
      assertThat(o.limit()).isEqualTo(10);
      assertThat(o.used()).isEqualTo(4);
      // the refused low message recorded nothing: normal still finds 4, and fills to 7
      for (int i = 0; i < 3; i++) {
        Decision d = engine.decideAt(of(Priority.NORMAL), t += 10).join();
        assertThat(d.allowed()).as("normal %d", i).isTrue();
        assertThat(d.rules().get(0).bound()).isEqualTo(7);
      }
      assertThat(engine.decideAt(of(Priority.NORMAL), t += 10).join().allowed()).isFalse();
      assertThat(engine.decideAt(of(Priority.LOW), t += 10).join().allowed()).isFalse();
      // high to 9, critical to the limit itself
      assertThat(engine.decideAt(of(Priority.HIGH), t += 10).join().allowed()).isTrue();
      assertThat(engine.decideAt(of(Priority.HIGH), t += 10).join().allowed()).isTrue();
      assertThat(engine.decideAt(of(Priority.HIGH), t += 10).join().allowed()).isFalse();
      Decision critical = engine.decideAt(of(Priority.CRITICAL), t += 10).join();
      assertThat(critical.allowed()).isTrue();
      assertThat(critical.rules().get(0).bound()).isEqualTo(10);
      assertThat(engine.decideAt(of(Priority.CRITICAL), t += 10).join().allowed()).isFalse();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"sliding-log", "fixed-window"})
  void aRefusedMessageIsSentAtWhenItsOwnBoundFrees(String algorithm) {
    try (Engine engine = engine(algorithm)) {
      // five messages an hour apart: the first four fill low's bound
      for (int i = 0; i < 5; i++) {
        assertThat(engine.decideAt(of(Priority.CRITICAL), T0 + i * 3_600_000L).join().allowed()).isTrue();
      }
      long now = T0 + 5 * 3_600_000L;
      Decision low = engine.decideAt(of(Priority.LOW), now).join();
      Decision normal = engine.decideAt(of(Priority.NORMAL), now).join();
      assertThat(normal.allowed()).isTrue(); // 5 + 1 <= 7
      // low needs the count at 3 before it: the log frees when the second message leaves the day,
      // the fixed window when the day ends
      long expected = algorithm.equals("sliding-log") ? T0 + 3_600_000L + 86_400_000L : T0 + 86_400_000L;
      assertThat(low.sendAt()).isEqualTo(expected);
      assertThat(low.retryAfterMs()).isEqualTo(expected - now);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"sliding-log", "gcra"})
  void aClassWhoseHeadroomIsTheWholeLimitIsNeverAdmitted(String algorithm) {
    String rules = """
        policies:
          - tenant: default
            rules:
              - id: transactional-only
                limit: 3
                window: 1h
                key: [recipient]
                algorithm: %s
                headroom: {low: 3}
        """.formatted(algorithm);
    try (Engine engine = Engine.builder(MemoryStore.builder().build()).callerTime(true)
        .policies(PolicyParser.parse(rules)).build()) {
      Decision d = engine.decideAt(of(Priority.LOW), T0).join();
      assertThat(d.allowed()).isFalse();
      assertThat(d.sendAt()).isEqualTo(-1);
      assertThat(d.retryAfterMs()).isEqualTo(-1);
      assertThat(engine.decideAt(of(Priority.NORMAL), T0).join().allowed()).isTrue();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"a", "b"})
  void theRulesFileKeepsTheHeadroomThroughTheWriter(String tenant) {
    var policy = PolicyParser.parse("""
        policies:
          - tenant: %s
            rules:
              - id: per-day
                limit: 50
                window: 24h
                key: [recipient]
                headroom: {normal: 5, low: 15}
        """.formatted(tenant)).get(0);
    Rule r = policy.rules().get(0);
    assertThat(r.headroom()).isEqualTo(new Headroom(0, 5, 15));
    assertThat(r.boundFor(Priority.LOW)).isEqualTo(35);
    assertThat(r.boundFor(Priority.CRITICAL)).isEqualTo(50);
    assertThat(PolicyParser.parseTree(PolicyParser.toTree(List.of(policy))).get(0)).isEqualTo(policy);
  }
}
