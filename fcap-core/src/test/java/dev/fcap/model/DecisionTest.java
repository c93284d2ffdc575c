package dev.fcap.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A decision's outcomes kept as numbers ({@link RuleOutcomes}) read back as the outcomes an eager
 * list would hold, and a decision made without an id gets one random id, the same on every read.
 */
class DecisionTest {
  private static final Rule DAY = Rule.of("day", 50, Duration.ofDays(1), Dimension.RECIPIENT)
      .withHeadroom(new Headroom(0, 5, 15));
  private static final Rule SHADOW = Rule.of("shadow", 2, Duration.ofMinutes(1), Dimension.RECIPIENT)
      .withMode(Mode.SHADOW);
  private static final Rule COUNTED = Rule.of("counted", 10, Duration.ofHours(1), Dimension.RECIPIENT)
      .withCountOnly(new Condition(Map.of(Dimension.CHANNEL, Set.of("sms"))));
  private static final List<Rule> RULES = List.of(DAY, SHADOW, COUNTED);

  @Test
  void outcomesReadBackAsTheRuleAndMessageSayWithTheNumbersAdded() {
    Message low = Message.builder("+15550001").channel("sms").priority(Priority.LOW).build();
    RuleOutcomes outcomes = new RuleOutcomes(RULES, low, 2)
        .add(false, 40, 3_600_000, 1_700_003_600_000L)
        .add(false, 0, 60_000, 1_700_000_060_000L) // refused with nothing used: still refused
        .add(true, 10, 0, 0);
    assertThat(outcomes).containsExactly(
        new RuleOutcome("day", 50, 86_400_000, 40, 10, false, true, 3_600_000, 1_700_003_600_000L, 35),
        new RuleOutcome("shadow", 2, 60_000, 0, 2, false, false, 60_000, 1_700_000_060_000L, 2),
        new RuleOutcome("counted", 10, 3_600_000, 10, 0, true, false, 0, 0, 10));
    RuleOutcomes between = new RuleOutcomes(RULES, low, 2) // an admitting outcome between two refusals
        .add(false, 40, 3_600_000, 1_700_003_600_000L)
        .add(true, 1, 0, 0)
        .add(false, 10, 120_000, 1_700_000_120_000L);
    assertThat(between).containsExactly(
        new RuleOutcome("day", 50, 86_400_000, 40, 10, false, true, 3_600_000, 1_700_003_600_000L, 35),
        new RuleOutcome("shadow", 2, 60_000, 1, 1, true, false, 0, 0, 2),
        new RuleOutcome("counted", 10, 3_600_000, 10, 0, false, false, 120_000, 1_700_000_120_000L, 10));
  }

  @Test
  void aDecisionSealsItsOutcomesAndEqualsOneWithTheSameOutcomesListed() {
    Message m = Message.builder("+15550002").channel("email").build();
    RuleOutcomes compact = new RuleOutcomes(RULES, m, 0).add(true, 1, 0, 0).add(true, 0, 0, 0);
    Decision decision = new Decision(true, "id-1", 0, List.of(), List.of(), compact, false, 5, 1, false, 0);
    assertThatThrownBy(() -> compact.add(true, 0, 0, 0)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("sealed");
    Decision eager = new Decision(true, "id-1", 0, List.of(), List.of(), List.copyOf(compact), false, 5, 1, false, 0);
    assertThat(decision).isEqualTo(eager).hasSameHashCodeAs(eager);
    assertThat(decision.rules()).hasSize(2);
    assertThat(decision.rules().get(1).enforced()).isFalse(); // the shadow rule
    assertThat(decision.rules().get(0).bound()).isEqualTo(45); // normal keeps 5
  }

  @Test
  void outcomesRefuseWhatTheyCannotHold() {
    Message m = Message.builder("+15550003").build();
    RuleOutcomes one = new RuleOutcomes(List.of(DAY), m, 0).add(true, 0, 0, 0);
    assertThatThrownBy(() -> one.add(true, 0, 0, 0)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("one outcome per rule");
    assertThatThrownBy(() -> new RuleOutcomes(List.of(DAY), m, 1).add(false, -1, 0, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new RuleOutcomes(RULES, m, 0).add(false, 1, 10, 20))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("refusals");
    assertThatThrownBy(() -> new RuleOutcomes(RULES, m, 1).add(true, 1, 10, 20))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no delay");
    assertThatThrownBy(() -> new RuleOutcomes(RULES, m, 4)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> one.get(1)).isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void aDecisionWithoutAnIdMakesOneRandomIdThatEveryReaderSees() throws Exception {
    Decision refused = new Decision(false, null, 1000, List.of("day"), List.of(), List.of(), false, 5, 1, false, 1005);
    Set<String> seen = idsReadAtOnceByEightThreads(refused);
    assertThat(seen).hasSize(1);
    assertThat(seen.iterator().next()).matches("[0-9a-f]{24}").isEqualTo(refused.decisionId());
    Decision other = new Decision(false, null, 1000, List.of("day"), List.of(), List.of(), false, 5, 1, false, 1005);
    assertThat(other.decisionId()).isNotEqualTo(refused.decisionId());
    assertThat(refused.degradedFor(Decision.STORE_DOWN).decisionId()).isEqualTo(refused.decisionId());
  }

  @Test
  void anIdMadeOnReadIsMadeOnceWhoeverReadsIt() throws Exception {
    AtomicInteger made = new AtomicInteger();
    Decision admitted = Decision.withIdMadeOnRead(() -> "sealed-" + made.incrementAndGet(), true, 0, List.of(),
        List.of(), List.of(), false, 5, 1, false, 0, null);
    assertThat(made).hasValue(0); // nothing made until read
    assertThat(idsReadAtOnceByEightThreads(admitted)).containsExactly("sealed-1");
    assertThat(made).hasValue(1);
    assertThat(admitted).isEqualTo(new Decision(true, "sealed-1", 0, List.of(), List.of(), List.of(), false, 5, 1,
        false, 0));
    Decision unsealable = Decision.withIdMadeOnRead(() -> null, true, 0, List.of(), List.of(), List.of(), false, 5,
        1, false, 0, null);
    assertThat(unsealable.decisionId()).matches("[0-9a-f]{24}").isEqualTo(unsealable.decisionId());
  }

  /** The ids that 8 threads, released at once, read from {@code decision}. */
  private static Set<String> idsReadAtOnceByEightThreads(Decision decision) throws InterruptedException {
    Set<String> seen = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    CountDownLatch start = new CountDownLatch(1);
    try {
      for (int t = 0; t < 8; t++) {
        pool.execute(() -> {
          try {
            start.await();
            seen.add(decision.decisionId());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
      start.countDown();
    } finally {
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    return seen;
  }
}
