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
  void aListRefilledForTheNextDecisionLeavesTheDecisionsMadeFromItAsTheyWere() {
    Message low = Message.builder("+15550004").channel("sms").priority(Priority.LOW).build();
    Message high = Message.builder("+15550005").priority(Priority.HIGH).build();
    RuleOutcomes list = new RuleOutcomes(RULES, low, 1)
        .add(false, 40, 3_600_000, 1_700_003_600_000L).add(true, 1, 0, 0).add(true, 2, 0, 0);
    Decision first = new Decision(false, null, 3_600_000, List.of("day"), List.of(), list, false, 5, 1, false,
        1_700_003_600_000L);
    List<RuleOutcome> before = List.copyOf(first.rules());
    list.refill(List.of(DAY), high, 0).add(true, 7, 0, 0);
    Decision second = new Decision(true, "id-2", 0, List.of(), List.of(), list, false, 6, 1, false, 0);
    assertThat(first.rules()).isEqualTo(before).hasSize(3);
    assertThat(first.rules().get(0).bound()).isEqualTo(35); // low keeps 15, from the first message
    assertThat(second.rules()).containsExactly(
        new RuleOutcome("day", 50, 86_400_000, 7, 43, true, true, 0, 0, 50));
    list.refill(RULES, low, 0).add(true, 1, 0, 0); // one outcome of three: the decision copies it
    Decision partial = new Decision(true, "id-3", 0, List.of(), List.of(), list, false, 7, 1, false, 0);
    list.refill(RULES, high, 0);
    assertThat(partial.rules()).containsExactly(
        new RuleOutcome("day", 50, 86_400_000, 1, 49, true, true, 0, 0, 35));
  }

  @Test
  void countsPastThirtyBitsAndLongDelaysReadBackWhole() {
    Message m = Message.builder("+15550006").build();
    long big = (1L << 30) + 5;
    long huge = 3_000_000_000_000L;
    RuleOutcomes outcomes = new RuleOutcomes(RULES, m, 2)
        .add(false, big, Long.MAX_VALUE - 1, -1)
        .add(true, huge, 0, 0)
        .add(false, (1L << 30) - 1, 1L << 40, 1_700_000_000_000L + (1L << 40));
    Decision d = new Decision(false, null, 1, List.of("day"), List.of("shadow"), outcomes, false, 5, 1, false, 6);
    assertThat(d.rules()).extracting(RuleOutcome::used).containsExactly(big, huge, (1L << 30) - 1);
    assertThat(d.rules()).extracting(RuleOutcome::retryAfterMs).containsExactly(Long.MAX_VALUE - 1, 0L, 1L << 40);
    assertThat(d.rules()).extracting(RuleOutcome::sendAt)
        .containsExactly(-1L, 0L, 1_700_000_000_000L + (1L << 40));
    assertThat(d.rules()).extracting(RuleOutcome::allowed).containsExactly(false, true, false);
    assertThat(d.rules().get(0).remaining()).isZero();
  }

  @Test
  void eachReasonReadsBackAsItWasGivenAndTheFlagsAsTheyWere() {
    for (String degraded : new String[] {null, Decision.STORE_DOWN}) {
      for (String suppressed : new String[] {null, "STOP"}) {
        for (int bits = 0; bits < 8; bits++) {
          boolean allowed = (bits & 1) != 0;
          boolean isDegraded = (bits & 2) != 0;
          boolean replayed = (bits & 4) != 0;
          Decision d = new Decision(allowed, "id", 0, List.of(), List.of(), List.of(), isDegraded, 5, 1, replayed, 0,
              degraded, suppressed);
          assertThat(d.degradedReason()).isEqualTo(degraded);
          assertThat(d.suppressedReason()).isEqualTo(suppressed);
          assertThat(d.allowed()).isEqualTo(allowed);
          assertThat(d.degraded()).isEqualTo(isDegraded);
          assertThat(d.replayed()).isEqualTo(replayed);
          assertThat(d.deferred()).isFalse();
          Decision again = d.degradedFor("store_full");
          assertThat(again.degradedReason()).isEqualTo("store_full");
          assertThat(again.suppressedReason()).isEqualTo(suppressed);
          assertThat(again.degraded()).isTrue();
          assertThat(again.allowed()).isEqualTo(allowed);
          assertThat(again.replayed()).isEqualTo(replayed);
        }
      }
    }
    Decision degradedOnly = new Decision(false, "id", 0, List.of(), List.of(), List.of(), true, 5, 1, false, 0,
        "STOP", null);
    Decision suppressedOnly = new Decision(false, "id", 0, List.of(), List.of(), List.of(), true, 5, 1, false, 0,
        null, "STOP");
    assertThat(degradedOnly).isNotEqualTo(suppressedOnly); // one reason, the same text, not the same component
    Decision booked = Decision.deferred("id", 10, List.of("day"), List.of(), List.of(), false, 5, 1, false, 15);
    assertThat(booked.deferred()).isTrue();
    assertThat(booked.allowed()).isFalse();
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
    Decision admitted = Decision.withIdMadeOnRead(in -> "sealed-" + in.length + "-" + made.incrementAndGet(), new byte[3], true, 0, List.of(),
        List.of(), List.of(), false, 5, 1, false, 0, null);
    assertThat(made).hasValue(0); // nothing made until read
    assertThat(idsReadAtOnceByEightThreads(admitted)).containsExactly("sealed-3-1");
    assertThat(made).hasValue(1);
    assertThat(admitted).isEqualTo(new Decision(true, "sealed-3-1", 0, List.of(), List.of(), List.of(), false, 5, 1,
        false, 0));
    Decision unsealable = Decision.withIdMadeOnRead(in -> null, new byte[0], true, 0, List.of(), List.of(), List.of(), false, 5,
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
