package dev.fcap.oracle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.RuleOutcome;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.statistics.Statistics;

/**
 * {@link Engine#decideAt(Message, long, Engine.RuleVerdicts)} builds no {@link Decision}, so it has a
 * loop of its own over the rules: it must report what {@code decideAt(..).join()} answers (which
 * {@link EngineOracleProperties} holds to the oracle), decision by decision, on random policies of
 * up to 12 rules (shared partitions included, so refusals further on that release what the first
 * partition recorded), a send log's traffic with the clock stepping back, and repeated message ids
 * (a replayed decision reports the partition that remembered it).
 */
class RuleVerdictsProperties {

  @Property(tries = 30)
  void verdictsAreTheRulesOfTheDecision(@ForAll long seed) {
    Policy policy = Traffic.randomPolicy(seed, 12, false);
    Traffic traffic = new Traffic(seed, policy, Traffic.Options.SEND_LOG, ManualClock.START);
    SplittableRandom random = new SplittableRandom(seed);
    long refused = 0;
    long replayed = 0;
    try (Engine decisions = engine(policy); Engine verdicts = engine(policy)) {
      List<String> reported = new ArrayList<>();
      Engine.RuleVerdicts into = (index, allowed, enforced) -> reported.add(policy.rules().get(index).id() + "="
          + allowed + (enforced ? "" : " (not enforced)"));
      for (int step = 0; step < 1500; step++) {
        Traffic.Decide d = (Traffic.Decide) traffic.next();
        Message m = random.nextInt(5) == 0 ? withMessageId(d.message(), "m" + random.nextInt(40)) : d.message();
        Decision expected = decisions.decideAt(m, d.time()).join();
        reported.clear();
        boolean allowed = verdicts.decideAt(m, d.time(), into).join();
        String at = "seed " + seed + ", step " + step + ", " + m;
        assertThat(allowed).as(at).isEqualTo(expected.allowed());
        assertThat(reported).as(at).isEqualTo(expected.rules().stream().map(RuleVerdictsProperties::verdict).toList());
        refused += expected.allowed() ? 0 : 1;
        replayed += expected.replayed() ? 1 : 0;
      }
    }
    // A random policy may refuse nothing, or admit no message that carries an id, so these hold over
    // the tries, not in each
    Statistics.label("refusals").collect(refused > 0);
    Statistics.label("refusals").coverage(c -> c.check(true).count(n -> n >= 10));
    Statistics.label("replayed message ids").collect(replayed > 0);
    Statistics.label("replayed message ids").coverage(c -> c.check(true).count(n -> n >= 10));
  }

  /**
   * A callback that decides again on the same engine and thread, while the decision it reports is
   * still being read: on the embedded store both decisions would answer into the thread's one
   * reusable answer, and the outer one's later rules would report the inner one's checks. The inner
   * decision (another recipient, deciding also in every shared partition) is made on the reference
   * engine right after the outer one, in the same order.
   */
  @Property(tries = 15)
  void aCallbackThatDecidesAgainLeavesTheVerdictsBeingReportedAlone(@ForAll long seed) {
    Policy policy = Traffic.randomPolicy(seed, 12, false);
    Traffic traffic = new Traffic(seed, policy, Traffic.Options.SEND_LOG, ManualClock.START);
    long differing = 0;
    try (Engine decisions = engine(policy); Engine verdicts = engine(policy)) {
      for (int step = 0; step < 600; step++) {
        Traffic.Decide d = (Traffic.Decide) traffic.next();
        Message inner = withRecipient(d.message(), "inner-" + step % 5);
        Decision expected = decisions.decideAt(d.message(), d.time()).join();
        Decision expectedInner = decisions.decideAt(inner, d.time()).join();
        List<String> reported = new ArrayList<>();
        List<String> reportedInner = new ArrayList<>();
        boolean allowed = verdicts.decideAt(d.message(), d.time(), (index, admits, enforced) -> {
          if (reported.isEmpty()) {
            boolean innerAllowed = verdicts.decideAt(inner, d.time(), (i, a, e) -> reportedInner.add(
                policy.rules().get(i).id() + "=" + a + (e ? "" : " (not enforced)"))).join();
            assertThat(innerAllowed).isEqualTo(expectedInner.allowed());
          }
          reported.add(policy.rules().get(index).id() + "=" + admits + (enforced ? "" : " (not enforced)"));
        }).join();
        String at = "seed " + seed + ", step " + step + ", " + d.message();
        assertThat(allowed).as(at).isEqualTo(expected.allowed());
        assertThat(reported).as(at).isEqualTo(expected.rules().stream().map(RuleVerdictsProperties::verdict).toList());
        assertThat(reportedInner).as(at).isEqualTo(
            expectedInner.rules().stream().map(RuleVerdictsProperties::verdict).toList());
        differing += expected.rules().equals(expectedInner.rules()) ? 0 : 1;
      }
    }
    // the two decisions of a step answer differently often enough for a shared answer to show
    Statistics.label("outer and inner differ").collect(differing >= 10);
    Statistics.label("outer and inner differ").coverage(c -> c.check(true).count(n -> n >= 5));
  }

  /**
   * A store that cannot answer on the calling thread (Redis, a failover decorator) may keep a request
   * until it answers, after the engine has gone on to the next decision: what it was handed must not
   * be the thread's reused request or key buffers. Decisions (verdicts and {@code Decision}s, in turn)
   * are issued in batches without waiting; the store holds each request with a copy of its keys as
   * handed over, and before answering checks that nothing changed them since.
   */
  @Property(tries = 20)
  void aStoreThatAnswersLaterKeepsTheRequestsItWasHanded(@ForAll long seed) {
    Policy policy = Traffic.randomPolicy(seed, 12, false);
    Traffic traffic = new Traffic(seed, policy, Traffic.Options.SEND_LOG, ManualClock.START);
    ManualClock clock = new ManualClock();
    AnswersLater store = new AnswersLater(MemoryStore.builder().clock(clock).segments(2).build());
    long handed = 0;
    try (Engine verdicts = Engine.builder(store).clock(clock).callerTime(true).releaseHorizon(Duration.ZERO)
        .policy(policy).build()) {
      for (int batch = 0; batch < 100; batch++) {
        List<java.util.concurrent.CompletableFuture<?>> pending = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
          Traffic.Decide d = (Traffic.Decide) traffic.next();
          pending.add(i % 2 == 0 ? verdicts.decideAt(d.message(), d.time(), (index, allowed, enforced) -> { })
              : verdicts.decideAt(d.message(), d.time()));
        }
        handed += store.answerAll("seed " + seed + ", batch " + batch);
        pending.forEach(java.util.concurrent.CompletableFuture::join);
      }
    }
    // a random policy may apply to few messages (no rule: no request), so this holds over the tries
    Statistics.label("requests handed over").collect(handed >= 200);
    Statistics.label("requests handed over").coverage(c -> c.check(true).count(n -> n >= 10));
  }

  /** Holds every request, and a copy of its keys, until {@link #answerAll}. */
  private static final class AnswersLater extends dev.fcap.store.ForwardingStore
      implements dev.fcap.store.internal.CallingThreadStore {
    private final java.util.ArrayDeque<Object[]> held = new java.util.ArrayDeque<>();

    AnswersLater(dev.fcap.store.Store store) {
      super(store);
    }

    /**
     * Claims it may answer on the calling thread, then declines every {@code applyInto} (as the
     * contract allows): the engine builds in its buffers first, and its fallback must still hand
     * over requests of their own.
     */
    @Override
    public boolean answersOnCallingThread() {
      return true;
    }

    @Override
    public boolean applyInto(dev.fcap.store.internal.ReusableRequest request,
        dev.fcap.store.internal.ReusableResult out) {
      return false;
    }

    @Override
    public java.util.concurrent.CompletableFuture<dev.fcap.store.PartitionResult> apply(
        dev.fcap.store.PartitionRequest request) {
      var answer = new java.util.concurrent.CompletableFuture<dev.fcap.store.PartitionResult>();
      held.add(new Object[] {request, keys(request), answer});
      return answer;
    }

    /** Answers every held request, oldest first (and those its answers lead to); how many. */
    int answerAll(String at) {
      int n = 0;
      for (Object[] h; (h = held.poll()) != null; n++) {
        dev.fcap.store.PartitionRequest request = (dev.fcap.store.PartitionRequest) h[0];
        assertThat(keys(request)).as("%s: the keys of %s changed after it was handed over", at, request)
            .isEqualTo(h[1]);
        @SuppressWarnings("unchecked")
        var answer = (java.util.concurrent.CompletableFuture<dev.fcap.store.PartitionResult>) h[2];
        super.apply(request).whenComplete((r, e) -> {
          if (e != null) {
            answer.completeExceptionally(e);
          } else {
            answer.complete(r);
          }
        });
      }
      return n;
    }

    private static List<String> keys(dev.fcap.store.PartitionRequest request) {
      List<String> keys = new ArrayList<>();
      keys.add(java.util.HexFormat.of().formatHex(request.partition()));
      request.counters().forEach(c -> keys.add(java.util.HexFormat.of().formatHex(c.key())));
      return keys;
    }
  }

  @Property(tries = 1)
  void anEngineWhoseDecisionsAreReleasableRefusesVerdicts() {
    try (Engine engine = Engine.builder(MemoryStore.builder().build()).callerTime(true)
        .policy(Traffic.randomPolicy(1, 3, true)).build()) {
      assertThatThrownBy(() -> engine.decideAt(Message.builder("r").build(), 1, (index, allowed, enforced) -> { }))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("releaseHorizon(Duration.ZERO)");
    }
  }

  private static String verdict(RuleOutcome o) {
    return o.id() + "=" + o.allowed() + (o.enforced() ? "" : " (not enforced)");
  }

  private static Engine engine(Policy policy) {
    ManualClock clock = new ManualClock();
    return Engine.builder(MemoryStore.builder().clock(clock).segments(2).build()).clock(clock).callerTime(true)
        .releaseHorizon(Duration.ZERO).policy(policy).build();
  }

  private static Message withRecipient(Message m, String recipient) {
    return new Message(m.tenant(), recipient, m.channel(), m.sender(), m.category(), m.content(), m.contentKey(),
        m.attributes(), m.cost(), m.messageId());
  }

  private static Message withMessageId(Message m, String messageId) {
    return new Message(m.tenant(), m.recipient(), m.channel(), m.sender(), m.category(), m.content(), m.contentKey(),
        m.attributes(), m.cost(), messageId);
  }
}
