package dev.fcap.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.CounterView;
import dev.fcap.engine.Engine;
import dev.fcap.engine.Inspection;
import dev.fcap.model.Algorithm;
import dev.fcap.model.Condition;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.ReleaseResult;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The store test kit: one suite every {@link Store} must pass, through the {@link Engine}, on a
 * clock the test moves by hand. A store test extends this class and implements {@link #newStore};
 * the store must read its time from the given clock.
 *
 * <p>The tests read as time traces: "at t0 + 15 s the 16th message is refused; at t0 + 60 s it
 * passes".
 */
public abstract class StoreContract {
  protected static final Rule PER_MINUTE = SeedRules.PER_MINUTE;
  protected static final Rule PER_DAY = SeedRules.PER_DAY;
  protected static final Rule SAME_CONTENT_59S = SeedRules.SAME_CONTENT_59S;
  protected static final Rule SAME_CONTENT_59M = SeedRules.SAME_CONTENT_59M;
  protected static final Policy SEED = SeedRules.POLICY;

  protected ManualClock clock;
  protected Store store;
  private int unique;

  /** A fresh, empty store whose clock is {@code clock}. */
  protected abstract Store newStore(ManualClock clock);

  @BeforeEach
  void openStore() {
    clock = new ManualClock();
    store = newStore(clock);
  }

  @AfterEach
  void closeStore() {
    store.close();
  }

  protected Engine engine(Policy policy) {
    return Engine.builder(store).clock(clock).policy(policy).build();
  }

  protected static Message to(String recipient, String content) {
    return Message.builder(recipient).content(content).build();
  }

  /** A message with a content never used before, so only recipient rules can refuse it. */
  protected Message fresh(String recipient) {
    return to(recipient, "unique content " + unique++);
  }

  private static RuleOutcome outcome(Decision d, String ruleId) {
    return d.rules().stream().filter(r -> r.id().equals(ruleId)).findFirst().orElseThrow();
  }

  // ---- the seed scenario ----------------------------------------------------------------------

  @Test
  void sixteenthMessageInAMinuteIsRefusedAndPassesExactlyWhenTheFirstIsOneMinuteOld() {
    Engine engine = engine(SEED);
    long t0 = clock.millis();
    for (int i = 0; i < 15; i++) {
      clock.set(t0 + i * 1000L);
      assertThat(engine.decide(fresh("+8613800000001")).join().allowed()).as("message %d", i + 1).isTrue();
    }
    clock.set(t0 + 15_000);
    Decision sixteenth = engine.decide(fresh("+8613800000001")).join();
    assertThat(sixteenth.allowed()).isFalse();
    assertThat(sixteenth.blockedBy()).containsExactly("recipient-per-minute");
    assertThat(sixteenth.retryAfterMs()).isEqualTo(45_000);
    assertThat(outcome(sixteenth, "recipient-per-minute").used()).isEqualTo(15);
    assertThat(outcome(sixteenth, "recipient-per-day").allowed()).isTrue();

    clock.set(t0 + 59_999);
    assertThat(engine.decide(fresh("+8613800000001")).join().allowed()).isFalse();
    clock.set(t0 + 60_000);
    Decision later = engine.decide(fresh("+8613800000001")).join();
    assertThat(later.allowed()).isTrue();
    assertThat(outcome(later, "recipient-per-minute").used()).isEqualTo(14);
    assertThat(outcome(later, "recipient-per-day").used()).isEqualTo(15);
  }

  @Test
  void thirdIdenticalContentWithin59SecondsIsRefusedWhileAnotherContentPasses() {
    Engine engine = engine(SEED);
    long t0 = clock.millis();
    assertThat(engine.decide(to("alice", "Your code is 1234")).join().allowed()).isTrue();
    clock.set(t0 + 10_000);
    assertThat(engine.decide(to("alice", "Your code is 1234")).join().allowed()).isTrue();
    clock.set(t0 + 20_000);
    Decision third = engine.decide(to("alice", "Your code is 1234")).join();
    assertThat(third.allowed()).isFalse();
    assertThat(third.blockedBy()).containsExactly("same-content-per-59s");
    assertThat(third.retryAfterMs()).isEqualTo(39_000);
    assertThat(engine.decide(to("alice", "Your code is 5678")).join().allowed()).isTrue();
    assertThat(engine.decide(to("bob", "Your code is 1234")).join().allowed()).isTrue();
    clock.set(t0 + 59_000);
    assertThat(engine.decide(to("alice", "Your code is 1234")).join().allowed()).isTrue();
  }

  @Test
  void sixthIdenticalContentWithin59MinutesIsRefused() {
    Engine engine = engine(SEED);
    long t0 = clock.millis();
    for (int i = 0; i < 5; i++) {
      clock.set(t0 + i * 60_000L);
      assertThat(engine.decide(to("carol", "promo")).join().allowed()).isTrue();
    }
    clock.set(t0 + 5 * 60_000L);
    Decision sixth = engine.decide(to("carol", "promo")).join();
    assertThat(sixth.blockedBy()).containsExactly("same-content-per-59m");
    assertThat(sixth.retryAfterMs()).isEqualTo(59 * 60_000L - 5 * 60_000L);
  }

  @Test
  void aRefusedMessageIsRecordedNowhere() {
    Engine engine = engine(SEED);
    engine.decide(to("dave", "x")).join();
    engine.decide(to("dave", "x")).join();
    Decision refused = engine.decide(to("dave", "x")).join();
    assertThat(refused.allowed()).isFalse();
    Decision next = engine.decide(fresh("dave")).join();
    assertThat(outcome(next, "recipient-per-minute").used()).isEqualTo(2);
    assertThat(outcome(next, "recipient-per-day").used()).isEqualTo(2);
  }

  @Test
  void checkRecordsNothing() {
    Engine engine = engine(SEED);
    for (int i = 0; i < 20; i++) {
      assertThat(engine.check(to("erin", "same")).join().allowed()).isTrue();
    }
    Decision real = engine.decide(to("erin", "same")).join();
    assertThat(outcome(real, "recipient-per-minute").used()).isZero();
  }

  // ---- shadow, exempt, match -------------------------------------------------------------------

  @Test
  void shadowRulesNeverBlockButReportAndCount() {
    Rule shadow = Rule.of("shadow-per-minute", 2, Duration.ofMinutes(1), Dimension.RECIPIENT).withMode(Mode.SHADOW);
    Engine engine = engine(new Policy("default", 1, List.of(shadow, PER_DAY)));
    engine.decide(fresh("frank")).join();
    engine.decide(fresh("frank")).join();
    Decision third = engine.decide(fresh("frank")).join();
    assertThat(third.allowed()).isTrue();
    assertThat(third.blockedBy()).isEmpty();
    assertThat(third.shadowBlockedBy()).containsExactly("shadow-per-minute");
    assertThat(outcome(third, "shadow-per-minute").enforced()).isFalse();
    Decision fourth = engine.decide(fresh("frank")).join();
    assertThat(outcome(fourth, "shadow-per-minute").used()).isEqualTo(3);
    assertThat(outcome(fourth, "recipient-per-day").used()).isEqualTo(3);
  }

  @Test
  void exemptMessagesAreNeitherCappedNorCounted() {
    Rule capped = Rule.of("per-minute", 1, Duration.ofMinutes(1), Dimension.RECIPIENT)
        .withExempt(new Condition(Map.of(Dimension.CATEGORY, Set.of("transactional"))));
    Engine engine = engine(new Policy("default", 1, List.of(capped)));
    Message otp = Message.builder("gina").category("transactional").content("code 1").build();
    for (int i = 0; i < 5; i++) {
      Decision d = engine.decide(otp).join();
      assertThat(d.allowed()).isTrue();
      assertThat(d.rules()).isEmpty();
    }
    Message marketing = Message.builder("gina").category("marketing").build();
    assertThat(engine.decide(marketing).join().allowed()).isTrue();
    assertThat(engine.decide(marketing).join().allowed()).isFalse();
  }

  @Test
  void matchSelectsTheMessagesARuleCounts() {
    Rule smsOnly = Rule.of("sms-per-minute", 1, Duration.ofMinutes(1), Dimension.RECIPIENT)
        .withMatch(new Condition(Map.of(Dimension.CHANNEL, Set.of("sms"))));
    Engine engine = engine(new Policy("default", 1, List.of(smsOnly)));
    Message sms = Message.builder("hank").channel("sms").build();
    Message push = Message.builder("hank").channel("push").build();
    assertThat(engine.decide(sms).join().allowed()).isTrue();
    assertThat(engine.decide(push).join().allowed()).isTrue();
    assertThat(engine.decide(push).join().allowed()).isTrue();
    assertThat(engine.decide(sms).join().blockedBy()).containsExactly("sms-per-minute");
  }

  // ---- release, cost ---------------------------------------------------------------------------

  @Test
  void releaseUndoesAnAdmittedDecisionOnce() {
    Engine engine = engine(SEED);
    Decision first = engine.decide(to("ivan", "hello")).join();
    engine.decide(to("ivan", "hello")).join();
    assertThat(engine.decide(to("ivan", "hello")).join().allowed()).isFalse();

    assertThat(engine.release(first.decisionId()).join()).isTrue();
    assertThat(engine.release(first.decisionId()).join()).as("idempotent").isTrue();
    Decision again = engine.decide(to("ivan", "hello")).join();
    assertThat(again.allowed()).isTrue();
    assertThat(outcome(again, "recipient-per-minute").used()).isEqualTo(1);
    assertThat(engine.decide(to("ivan", "hello")).join().allowed()).as("the second release undid nothing").isFalse();

    assertThat(engine.release("000000000000ffffffffffff").join()).isFalse();
    assertThat(engine.release("not-an-id").join()).isFalse();
  }

  @Test
  void aDeniedDecisionCannotBeReleased() {
    Engine engine = engine(SEED);
    engine.decide(to("jane", "a")).join();
    engine.decide(to("jane", "a")).join();
    Decision denied = engine.decide(to("jane", "a")).join();
    assertThat(engine.release(denied.decisionId()).join()).isFalse();
    assertThat(outcome(engine.decide(fresh("jane")).join(), "recipient-per-minute").used()).isEqualTo(2);
  }

  @Test
  void costCountsAgainstTheLimit() {
    Engine engine = engine(new Policy("default", 1, List.of(PER_MINUTE)));
    assertThat(engine.decide(fresh("kim").withCost(10)).join().allowed()).isTrue();
    Decision tooMuch = engine.decide(fresh("kim").withCost(10)).join();
    assertThat(tooMuch.allowed()).isFalse();
    assertThat(tooMuch.retryAfterMs()).isEqualTo(60_000);
    assertThat(engine.decide(fresh("kim").withCost(5)).join().allowed()).isTrue();
    Decision never = engine.decide(fresh("lee").withCost(16)).join();
    assertThat(never.allowed()).isFalse();
    assertThat(never.retryAfterMs()).isEqualTo(-1);
  }

  @Test
  void releaseGivesBackTheCost() {
    Engine engine = engine(new Policy("default", 1, List.of(PER_MINUTE)));
    Decision big = engine.decide(fresh("kim").withCost(10)).join();
    clock.advance(5);
    engine.decide(fresh("kim").withCost(5)).join();
    assertThat(engine.decide(fresh("kim")).join().allowed()).isFalse();
    engine.release(big.decisionId()).join();
    assertThat(outcome(engine.decide(fresh("kim")).join(), "recipient-per-minute").used()).isEqualTo(5);
  }

  // ---- release by decision id from any node ------------------------------------------------------

  @Test
  void anyNodeCanReleaseByDecisionIdOnceAndAStaleOneSaysExpired() {
    Engine decider = engine(SEED);
    Engine other = engine(SEED); // another node on the same store: it never saw the decision
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      ids.add(decider.decide(fresh("tom")).join().decisionId());
    }
    Decision refused = decider.decide(fresh("tom")).join();
    assertThat(refused.allowed()).isFalse();
    clock.advance(10_000);
    assertThat(other.releaseDecision(ids.get(3), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    // a retried release (the first answer timed out, or it reached yet another node) gives back nothing more
    assertThat(decider.releaseDecision(ids.get(3), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    assertThat(decider.decide(fresh("tom")).join().allowed()).as("one slot given back").isTrue();
    assertThat(decider.decide(fresh("tom")).join().allowed()).as("only one").isFalse();
    assertThat(other.releaseDecision(refused.decisionId(), t -> true).join()).as("a denial recorded nothing")
        .isEqualTo(ReleaseResult.UNKNOWN);
    assertThat(other.releaseDecision(ids.get(4), t -> !t.equals("default")).join()).as("another tenant's")
        .isEqualTo(ReleaseResult.UNKNOWN);
    String id = ids.get(5);
    for (String hostile : List.of("", "d", "x".repeat(100_000), id + "A", id.substring(0, id.length() - 1) + "é",
        "e" + id.substring(2), (id.charAt(0) == 'e' ? "d" : "e") + id.substring(1), "000000000000ffffffffffff")) {
      assertThat(other.releaseDecision(hostile, t -> true).join()).as(hostile.length() > 80 ? "a long id" : hostile)
          .isEqualTo(ReleaseResult.UNKNOWN);
    }
    clock.advance(24 * 3600 * 1000L); // the policy's longest window: the release horizon
    assertThat(other.releaseDecision(ids.get(5), t -> true).join()).isEqualTo(ReleaseResult.EXPIRED);
    assertThat(other.releaseDecision(ids.get(3), t -> true).join()).as("released, then expired")
        .isEqualTo(ReleaseResult.EXPIRED);
  }

  /**
   * Whether the store keeps partition incarnations, so that it stores nothing per admitted decision
   * ({@link Idempotency}, "stored as nothing"); a store that does not remembers a record instead.
   */
  protected boolean keepsIncarnations() {
    return true;
  }

  @Test
  void anOrdinaryDecisionIsReleasedOnceByItsIdAndNeverAfterAResetOrItsHorizon() {
    Engine engine = Engine.builder(store).clock(clock).policy(SEED).releaseHorizon(java.time.Duration.ofMinutes(30))
        .build();
    Message m = to("rosa", "the same text");
    Decision d1 = engine.decide(m).join();
    Decision d2 = engine.decide(m).join();
    assertThat(engine.decide(m).join().allowed()).as("two identical in 59 s").isFalse();
    assertThat(engine.releaseDecision(d1.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    assertThat(engine.decide(m).join().allowed()).as("one given back").isTrue();
    assertThat(engine.releaseDecision(d1.decisionId(), t -> true).join()).as("again").isEqualTo(ReleaseResult.RELEASED);
    assertThat(engine.decide(m).join().allowed()).as("given back once").isFalse();

    assertThat(engine.reset("default", "rosa").join()).isTrue();
    Decision d4 = engine.decide(m).join();
    assertThat(engine.decide(m).join().allowed()).isTrue();
    assertThat(engine.decide(m).join().allowed()).isFalse();
    engine.releaseDecision(d2.decisionId(), t -> true).join();
    assertThat(engine.decide(m).join().allowed()).as("a decision before the reset gives back nothing after it")
        .isFalse();
    assertThat(engine.releaseDecision(d4.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    assertThat(engine.decide(m).join().allowed()).as("one after the reset gives back").isTrue();

    // the 59-minute rule still counts them, 30 minutes later: a release past its horizon gives nothing
    clock.advance(60_000);
    Decision late = engine.decide(to("rosa", "another text")).join();
    assertThat(engine.decide(to("rosa", "another text")).join().allowed()).isTrue();
    clock.advance(29 * 60_000L);
    assertThat(engine.decide(to("rosa", "another text")).join().allowed()).isTrue(); // the partition lives on
    clock.advance(60_000 + 1_000);
    assertThat(engine.releaseDecision(late.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.EXPIRED);
    for (int i = 0; i < 2; i++) {
      assertThat(engine.decide(to("rosa", "another text")).join().allowed()).isTrue();
      clock.advance(60_000); // past the 59-second rule
    }
    assertThat(engine.decide(to("rosa", "another text")).join().allowed()).as("5 in 59 minutes, none given back")
        .isFalse();
  }

  @Test
  void aDecisionStoredAsNothingAnswersThePartitionsIncarnationUntilTheResetAndItsReleaseChecksIt() {
    byte[] partition = {'r', 1, 'x'};
    CounterRequest counter = new CounterRequest(new byte[] {7, 7},
        CounterSpec.single(Algorithm.SLIDING_LOG, 50, 86_400_000, true, 0), 0);
    java.util.function.LongSupplier used = () -> store.apply(PartitionRequest.of(partition, Operation.CHECK,
        PartitionRequest.STORE_TIME, 1, List.of(counter))).join().used()[0];
    java.util.function.LongFunction<PartitionResult> decide = candidate -> store.apply(new PartitionRequest(partition,
        Operation.DECIDE, PartitionRequest.STORE_TIME, 1, List.of(counter), 0,
        new Idempotency(key(candidate), 3_600_000, new byte[] {2}, false, candidate), null)).join();
    PartitionResult first = decide.apply(11);
    PartitionResult second = decide.apply(12);
    if (!keepsIncarnations()) {
      assertThat(first.incarnation()).as("a store without incarnations remembers a record instead").isZero();
      return;
    }
    assertThat(first.incarnation()).as("the partition takes the first decision's").isEqualTo(11);
    assertThat(second.incarnation()).as("and keeps it").isEqualTo(11);
    java.util.function.BiFunction<Long, Long, PartitionResult> release = (incarnation, claim) -> store.apply(
        new PartitionRequest(partition, Operation.RELEASE, PartitionRequest.STORE_TIME, 1, List.of(counter),
            first.time(), new Idempotency(key(claim), 3_600_000, new byte[] {2}, false, incarnation), null)).join();
    assertThat(release.apply(12L, 12L).allowed()).as("another incarnation's").isFalse();
    assertThat(release.apply(11L, 11L).allowed()).as("claimed").isTrue();
    assertThat(release.apply(11L, 11L).allowed()).as("claimed before").isFalse();
    assertThat(release.apply(11L, 12L).allowed()).as("the second decision's claim").isTrue();
    assertThat(used.getAsLong()).as("both given back").isZero();
    decide.apply(15);
    assertThat(used.getAsLong()).isEqualTo(1);
    assertThat(store.delete(partition).join()).isTrue();
    assertThat(decide.apply(13).incarnation()).as("a reset partition takes a new one").isEqualTo(13);
    assertThat(release.apply(11L, 14L).allowed()).as("a decision before the reset").isFalse();
    assertThat(used.getAsLong()).isEqualTo(1);
  }

  private static byte[] key(long v) {
    return java.nio.ByteBuffer.allocate(16).putLong(v).putLong(v).array();
  }

  @Test
  void aDecisionOfSeveralPartitionsIsReleasedInEveryOneByAnyNode() {
    Rule perSender = Rule.of("per-sender", 3, Duration.ofHours(1), Dimension.SENDER);
    Policy policy = new Policy("default", 1, List.of(PER_MINUTE, perSender));
    Engine decider = engine(policy);
    Engine other = engine(policy);
    Message m = Message.builder("uma").sender("bank").content("x").build();
    Decision first = decider.decide(m).join();
    decider.decide(Message.builder("vic").sender("bank").content("y").build()).join();
    decider.decide(Message.builder("uma").sender("bank").content("z").build()).join();
    assertThat(decider.decide(Message.builder("wes").sender("bank").content("w").build()).join().allowed())
        .as("the sender's three are used").isFalse();
    assertThat(other.releaseDecision(first.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    assertThat(other.releaseDecision(first.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    Decision next = decider.decide(Message.builder("uma").sender("bank").content("v").build()).join();
    assertThat(next.allowed()).isTrue();
    assertThat(outcome(next, "per-sender").used()).as("given back in the sender's partition, once").isEqualTo(2);
    assertThat(outcome(next, "recipient-per-minute").used()).as("and in the recipient's").isEqualTo(1);
  }

  @Test
  void aDecisionOfTwelveRulesOverThreePartitionsIsReleasableByItsId() {
    // a release record's tail lists every counter (content-keyed ones carry 16-byte fingerprints) and
    // the other partitions: here about 300 bytes, past the 255 first allowed (the oracle's seed 226)
    // (rules of one key and one algorithm share a counter: four algorithms times three keys make twelve)
    List<Rule> rules = new java.util.ArrayList<>();
    List<List<Dimension>> keys = List.of(List.of(Dimension.RECIPIENT, Dimension.CONTENT),
        List.of(Dimension.RECIPIENT, Dimension.CONTENT, Dimension.CHANNEL), List.of(Dimension.CHANNEL, Dimension.CONTENT));
    for (Algorithm a : Algorithm.values()) {
      for (int k = 0; k < keys.size(); k++) {
        rules.add(new Rule(a.name().toLowerCase(java.util.Locale.ROOT) + "-" + k, null, 100, Duration.ofHours(1),
            keys.get(k), null, null, a, 0, null, null));
      }
    }
    Policy policy = new Policy("default", 1, rules);
    Engine decider = engine(policy);
    Engine other = engine(policy);
    Message m = Message.builder("xan").channel("sms").content("the same text").build();
    Decision first = decider.decide(m).join();
    assertThat(first.allowed()).isTrue();
    assertThat(other.releaseDecision(first.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.RELEASED);
    Decision next = decider.decide(m).join();
    for (Rule r : rules) {
      assertThat(outcome(next, r.id()).used()).as("%s given back before this one", r.id()).isZero();
    }
  }

  /** The recipient partition key of tenant "default" (the engine's Keys: 'r' varint(len) tenant recipient). */
  public static byte[] partitionOf(String recipient) {
    byte[] r = recipient.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] p = new byte[9 + r.length];
    p[0] = 'r';
    p[1] = 7;
    System.arraycopy("default".getBytes(java.nio.charset.StandardCharsets.UTF_8), 0, p, 2, 7);
    System.arraycopy(r, 0, p, 9, r.length);
    return p;
  }

  @Test
  void aLargeLogIsInspectedWithoutReadingItWhole() {
    // above LargeLog.LARGE_FROM entries a sliding log lives in blocks; reading it whole is O(n) (on
    // Redis: seconds at 10^6 entries, the server blocked), so inspection asks a dry run instead
    Rule large = Rule.of("recipient-per-hour", 5_000, Duration.ofHours(1), Dimension.RECIPIENT);
    Engine engine = engine(new Policy("default", 1, List.of(large)));
    for (int wave = 0; wave < 15; wave++) {
      // waves of 100: 1,500 calls on one partition at once queue behind each other in Redis, and on a
      // busy machine the last ones passed the store's 1 s command timeout
      List<java.util.concurrent.CompletableFuture<Decision>> sent = new java.util.ArrayList<>();
      for (int i = 0; i < 100; i++) {
        sent.add(engine.decide(Message.builder("yul").build()));
      }
      sent.forEach(java.util.concurrent.CompletableFuture::join);
    }
    var snapshot = store.read(partitionOf("yul")).join();
    assertThat(snapshot.counters()).singleElement().satisfies(c -> assertThat(c.state()).as("not read whole").isNull());
    assertThat(engine.inspect("default", "yul").join().counters()).singleElement().satisfies(v -> {
      assertThat(v.used()).isEqualTo(1_500);
      assertThat(v.remaining()).isEqualTo(3_500);
    });
  }

  @Test
  void releasesByMessageIdAndByDecisionIdGiveBackOnceTogether() {
    Engine engine = engine(SEED);
    Decision d = engine.decide(withId("val", "m-1")).join();
    assertThat(engine.decide(withId("val", "m-1")).join().decisionId()).as("a replay answers the same id")
        .isEqualTo(d.decisionId());
    engine.decide(fresh("val")).join();
    assertThat(engine.releaseMessage(withId("val", "m-1")).join()).isTrue();
    assertThat(engine.releaseDecision(d.decisionId(), t -> true).join()).as("released already")
        .isEqualTo(ReleaseResult.RELEASED);
    assertThat(outcome(engine.decide(fresh("val")).join(), "recipient-per-minute").used()).isEqualTo(1);
  }

  @Test
  void releasesByDecisionIdCanBeTurnedOff() {
    Engine engine = Engine.builder(store).clock(clock).releaseHorizon(Duration.ZERO).policy(SEED).build();
    Decision d = engine.decide(fresh("wim")).join();
    assertThat(engine.releaseDecision(d.decisionId(), t -> true).join()).isEqualTo(ReleaseResult.UNKNOWN);
    assertThat(outcome(engine.decide(fresh("wim")).join(), "recipient-per-minute").used()).isEqualTo(1);
    engine.decide(withId("wim", "m-1")).join();
    assertThat(engine.releaseMessage(withId("wim", "m-1")).join()).as("by message id still").isTrue();
  }

  // ---- large sliding logs (dev.fcap.algorithm.LargeLog on the embedded store) --------------------

  /**
   * A channel-wide log above the compact layout's threshold, against a brute-force count: costs above
   * 1, several messages in one millisecond, releases, the clock stepping back, windows ageing out,
   * and limit edits that keep the counts (3,000, then 2,000, then 600: back into the compact layout).
   */
  @Test
  void largeSlidingLogsCountExactlyWithCostsReleasesStepsBackAndEdits() {
    Rule rule = Rule.of("channel-per-hour", 3000, Duration.ofHours(1), Dimension.CHANNEL);
    Engine engine = engine(new Policy("default", 1, List.of(rule)));
    java.util.Random random = new java.util.Random(7);
    List<long[]> admitted = new ArrayList<>(); // time, cost: what the log counts, in time order
    List<long[]> releasable = new ArrayList<>(); // the same entries, beside their decision ids
    List<String> ids = new ArrayList<>();
    long limit = 3000;
    long latest = Long.MIN_VALUE; // the partition's time: a step back is decided at it
    boolean refused = false;
    for (int step = 0; step < 2600; step++) {
      if (step == 1200 || step == 2200) {
        limit = step == 1200 ? 2000 : 600;
        engine.setPolicy(new Policy("default", step, List.of(rule.withLimit(limit))));
      }
      if (step == 1700) {
        clock.advanceSeconds(-40); // the clock goes back: later entries count as inside the window
      } else {
        clock.advance(random.nextInt(4) == 0 ? 0 : random.nextInt(3000));
      }
      long now = Math.max(clock.millis(), latest);
      if (step < 2200 && random.nextInt(15) == 0 && !ids.isEmpty()) {
        int k = random.nextInt(ids.size());
        assertThat(engine.release(ids.remove(k)).join()).isTrue();
        long[] e = releasable.remove(k);
        int at = admitted.indexOf(e);
        if (admitted.size() - 1 - at <= dev.fcap.algorithm.LargeLog.MAX_RELEASE_MOVES) {
          admitted.remove(at); // else it stays counted: a release moves at most one block of entries
        }
        latest = now;
        continue;
      }
      long cost = random.nextInt(5) == 0 ? 1 + random.nextInt(3) : 1;
      long used = 0;
      for (long[] e : admitted) {
        used += e[0] > now - 3_600_000L ? e[1] : 0;
      }
      Decision d = engine.decide(Message.builder("r" + random.nextInt(50)).channel("sms").cost(cost).build()).join();
      assertThat(d.allowed()).as("step %d, used %d + %d of %d", step, used, cost, limit).isEqualTo(used + cost <= limit);
      assertThat(outcome(d, "channel-per-hour").used()).as("step %d", step).isEqualTo(used);
      assertThat(d.time()).as("step %d: decided at the partition's time", step).isEqualTo(now);
      if (d.allowed()) {
        long[] e = {now, cost};
        admitted.add(e);
        releasable.add(e);
        ids.add(d.decisionId());
        latest = now;
      } else {
        refused = true;
      }
    }
    assertThat(refused).as("the traffic reaches the limit").isTrue();
  }

  // ---- rule edits, reset, inspect --------------------------------------------------------------

  @Test
  void editingLimitOrWindowKeepsTheCounts() {
    Engine engine = engine(new Policy("default", 1, List.of(PER_MINUTE)));
    for (int i = 0; i < 10; i++) {
      engine.decide(fresh("liam")).join();
    }
    engine.setPolicy(new Policy("default", 2, List.of(PER_MINUTE.withLimit(10))));
    Decision lowered = engine.decide(fresh("liam")).join();
    assertThat(lowered.blockedBy()).containsExactly("recipient-per-minute");
    assertThat(lowered.policyVersion()).isEqualTo(2);

    clock.advanceSeconds(30);
    engine.setPolicy(new Policy("default", 3, List.of(PER_MINUTE.withLimit(12).withWindow(Duration.ofMinutes(2)))));
    clock.advanceSeconds(20);
    Decision widened = engine.decide(fresh("liam")).join();
    assertThat(widened.allowed()).isTrue();
    assertThat(outcome(widened, "recipient-per-minute").used()).isEqualTo(10);
    clock.advanceSeconds(40);
    Decision later = engine.decide(fresh("liam")).join();
    assertThat(outcome(later, "recipient-per-minute").used()).as("sent 90 s ago, inside the new 2 min window").isEqualTo(11);
    assertThat(later.allowed()).isTrue();
    assertThat(engine.decide(fresh("liam")).join().blockedBy()).containsExactly("recipient-per-minute");
  }

  @Test
  void everyAlgorithmKeepsCountsAcrossLimitEdits() {
    for (Algorithm algorithm : Algorithm.values()) {
      Rule rule = Rule.of("edit-" + algorithm.id(), 5, Duration.ofHours(1), Dimension.RECIPIENT).withAlgorithm(algorithm);
      Engine engine = engine(new Policy("default", 1, List.of(rule)));
      String who = "edit-" + algorithm.id();
      for (int i = 0; i < 3; i++) {
        assertThat(engine.decide(fresh(who)).join().allowed()).isTrue();
      }
      engine.setPolicy(new Policy("default", 2, List.of(rule.withLimit(3))));
      assertThat(engine.decide(fresh(who)).join().allowed()).as(algorithm.id()).isFalse();
    }
  }

  @Test
  void aReleaseAfterALimitEditCountsByTheRuleAsItIsNow() {
    // a release replays the decision's requests; with the specs of the decision's policy, it pruned
    // the log to the old limit of 2 and dropped messages the raised limit still counts
    for (Algorithm algorithm : Algorithm.values()) {
      Rule rule = Rule.of("raise-" + algorithm.id(), 2, Duration.ofHours(1), Dimension.RECIPIENT).withAlgorithm(algorithm);
      Engine engine = engine(new Policy("default", 1, List.of(rule)));
      String who = "raise-" + algorithm.id();
      Decision a = engine.decide(fresh(who)).join();
      assertThat(a.allowed()).isTrue();
      engine.setPolicy(new Policy("default", 2, List.of(rule.withLimit(5))));
      for (int i = 0; i < 4; i++) {
        clock.advance(1);
        assertThat(engine.decide(fresh(who)).join().allowed()).as(algorithm.id() + " #" + i).isTrue();
      }
      assertThat(engine.release(a.decisionId()).join()).isTrue();
      int admitted = 0;
      for (int i = 0; i < 5; i++) {
        clock.advance(1);
        admitted += engine.decide(fresh(who)).join().allowed() ? 1 : 0;
      }
      assertThat(admitted).as(algorithm.id() + ": 4 held of 5, one given back").isEqualTo(1);
    }
  }

  @Test
  void aReleaseLeavesACounterWhoseRuleIsGoneAndCountsTheOthers() {
    Rule kept = Rule.of("kept", 3, Duration.ofHours(1), Dimension.RECIPIENT);
    Rule gone = Rule.of("gone", 3, Duration.ofHours(1), Dimension.RECIPIENT).withAlgorithm(Algorithm.FIXED_WINDOW);
    Engine engine = engine(new Policy("default", 1, List.of(kept, gone)));
    Decision a = engine.decide(fresh("nora")).join();
    engine.decide(fresh("nora")).join();
    engine.setPolicy(new Policy("default", 2, List.of(kept)));
    assertThat(engine.release(a.decisionId()).join()).isTrue();
    Decision next = engine.decide(fresh("nora")).join();
    assertThat(outcome(next, "kept").used()).as("the released message is given back").isEqualTo(1);
  }

  @Test
  void releasingAMessageOfAnOlderFixedWindowGivesBackNothingOfTheCurrentOne() {
    // a caller-time decision is released at its own time; the count is the newer window's, which
    // the older message never was in (OracleVerify --older-releases)
    Rule rule = Rule.of("hourly", 1, Duration.ofHours(1), Dimension.RECIPIENT).withAlgorithm(Algorithm.FIXED_WINDOW);
    // released after its window: a horizon of two hours keeps the decision releasable then
    Engine engine = Engine.builder(store).clock(clock).callerTime(true).releaseHorizon(Duration.ofHours(2))
        .policy(new Policy("default", 1, List.of(rule))).build();
    long hour = Duration.ofHours(1).toMillis();
    long t0 = Math.floorDiv(clock.millis(), hour) * hour + 600_000;
    Decision a = engine.decideAt(fresh("olga"), t0).join();
    assertThat(a.allowed()).isTrue();
    assertThat(engine.decideAt(fresh("olga"), t0 + hour).join().allowed()).as("a new window").isTrue();
    assertThat(engine.release(a.decisionId()).join()).isTrue();
    assertThat(engine.decideAt(fresh("olga"), t0 + hour + 1).join().allowed()).as("the window holds one already").isFalse();
  }

  @Test
  void releasingAGcraMessageWhoseCellHasDrainedGivesNothingBack() {
    Rule rule = Rule.of("metered", 1, Duration.ofHours(1), Dimension.RECIPIENT).withAlgorithm(Algorithm.GCRA);
    // released after its window: a horizon of two hours keeps the decision releasable then
    Engine engine = Engine.builder(store).clock(clock).callerTime(true).releaseHorizon(Duration.ofHours(2))
        .policy(new Policy("default", 1, List.of(rule))).build();
    long t0 = clock.millis();
    long hour = Duration.ofHours(1).toMillis();
    Decision a = engine.decideAt(fresh("pia"), t0).join();
    assertThat(engine.decideAt(fresh("pia"), t0 + hour).join().allowed()).as("a's cell has drained").isTrue();
    assertThat(engine.release(a.decisionId()).join()).isTrue();
    assertThat(engine.decideAt(fresh("pia"), t0 + hour + 1).join().allowed()).as("the second cell is held").isFalse();
  }

  /**
   * A write at t0 + 20 s dropped the expired content counter of "x" (and a log prunes by its write's
   * time): a request from a clock stepped back to t0 + 5 s is decided at t0 + 20 s, the partition's
   * latest time, never at a time whose counts are gone. Before, it was decided at t0 + 5 s on a
   * state that no longer held t0's "x": "x" twice in 10 s under a limit of 1.
   */
  @Test
  void aClockSteppedBackIsDecidedAtThePartitionsLatestTime() {
    Rule perContent = Rule.of("content-10s", 1, Duration.ofSeconds(10), Dimension.RECIPIENT, Dimension.CONTENT);
    Rule perMinute = Rule.of("per-minute", 5, Duration.ofMinutes(1), Dimension.RECIPIENT);
    Engine engine = engine(new Policy("default", 1, List.of(perContent, perMinute)));
    long t0 = clock.millis();
    assertThat(engine.decide(to("rita", "x")).join().allowed()).isTrue();
    clock.set(t0 + 20_000);
    assertThat(engine.decide(to("rita", "y")).join().allowed()).isTrue();
    clock.set(t0 + 5_000);
    Decision back = engine.decide(to("rita", "x")).join();
    assertThat(back.time()).as("decided at the partition's latest time").isEqualTo(t0 + 20_000);
    assertThat(back.allowed()).as("t0's x left the window of t0 + 20 s").isTrue();
    assertThat(engine.check(to("rita", "x")).join().allowed()).as("x at t0 + 20 s holds the window").isFalse();
    assertThat(engine.inspect("default", "rita").join().time()).as("inspected at the partition's time too")
        .isEqualTo(t0 + 20_000);
    Decision other = engine.decide(to("sam", "x")).join();
    assertThat(other.time()).as("another partition keeps its own time").isEqualTo(t0 + 5_000);
  }

  @Test
  void resetForgetsARecipient() {
    Engine engine = engine(SEED);
    for (int i = 0; i < 15; i++) {
      engine.decide(fresh("mia")).join();
    }
    engine.decide(fresh("nick")).join();
    assertThat(engine.decide(fresh("mia")).join().allowed()).isFalse();
    assertThat(engine.reset("default", "mia").join()).isTrue();
    assertThat(engine.inspect("default", "mia").join().counters()).isEmpty();
    assertThat(engine.decide(fresh("mia")).join().allowed()).isTrue();
    assertThat(engine.inspect("default", "nick").join().counters()).isNotEmpty();
    assertThat(engine.reset("default", "nobody").join()).isFalse();
  }

  @Test
  void inspectShowsEachRuleAndContentAndWhenItFreesUp() {
    Engine engine = engine(SEED);
    long t0 = clock.millis();
    engine.decide(to("olga", "hi")).join();
    clock.set(t0 + 1000);
    engine.decide(to("olga", "hi")).join();
    clock.set(t0 + 2000);
    engine.decide(to("olga", "bye")).join();
    clock.set(t0 + 3000);
    Inspection inspection = engine.inspect("default", "olga").join();
    assertThat(inspection.time()).isEqualTo(t0 + 3000);
    CounterView minute = inspection.counters().stream().filter(c -> c.ruleId().equals("recipient-per-minute")).findFirst().orElseThrow();
    assertThat(minute.used()).isEqualTo(3);
    assertThat(minute.remaining()).isEqualTo(12);
    assertThat(minute.freesInMs()).isZero();
    List<CounterView> content59s = inspection.counters().stream().filter(c -> c.ruleId().equals("same-content-per-59s")).toList();
    assertThat(content59s).hasSize(2);
    CounterView hi = content59s.stream().filter(c -> c.used() == 2).findFirst().orElseThrow();
    assertThat(hi.values()).containsKey("content");
    assertThat(hi.values().get("content")).hasSize(32).doesNotContain("hi");
    assertThat(hi.remaining()).isZero();
    assertThat(hi.freesInMs()).isEqualTo(59_000 - 3000);
  }

  @Test
  void idleCountersExpire() {
    Engine engine = engine(SEED);
    engine.decide(to("pat", "x")).join();
    clock.advance(Duration.ofMinutes(59).toMillis());
    assertThat(engine.inspect("default", "pat").join().counters()).extracting(CounterView::ruleId)
        .containsExactly("recipient-per-minute", "recipient-per-day");
    clock.advance(Duration.ofHours(24).toMillis());
    assertThat(engine.inspect("default", "pat").join().counters()).isEmpty();
  }

  // ---- keys ------------------------------------------------------------------------------------

  @Test
  void oddRecipientIdsNeverShareCounters() {
    Rule one = Rule.of("one", 1, Duration.ofMinutes(1), Dimension.RECIPIENT);
    Engine engine = engine(new Policy("default", 1, List.of(one)));
    Engine other = engine(new Policy("de", 1, List.of(one)));
    List<String> ids = new ArrayList<>(List.of("a", "a:b", "a}", "{a}", "{a", "a b", "a\u0000", "A", "ä", "a\u0308",
        "\uD83D\uDE00", "x".repeat(1024), "x".repeat(1023), "", "default", "fault:a", "r", "{", "}", ":"));
    ids.removeIf(String::isEmpty);
    for (String id : ids) {
      assertThat(engine.decide(Message.builder(id).build()).join().allowed()).as("first for %s", id).isTrue();
    }
    for (String id : ids) {
      assertThat(engine.decide(Message.builder(id).build()).join().allowed()).as("second for %s", id).isFalse();
    }
    // tenant "de" + recipient "fault:a" must not alias tenant "default" + recipient ":a" or similar
    other.setPolicy(new Policy("de", 1, List.of(one)));
    assertThat(other.decide(Message.builder("fault:a").tenant("de").build()).join().allowed()).isTrue();
  }

  // ---- algorithms through the store ------------------------------------------------------------

  @Test
  void fixedWindowResetsAtTheBoundary() {
    Rule fixed = Rule.of("fixed", 2, Duration.ofMinutes(1), Dimension.RECIPIENT).withAlgorithm(Algorithm.FIXED_WINDOW);
    Engine engine = engine(new Policy("default", 1, List.of(fixed)));
    long boundary = (clock.millis() / 60_000 + 1) * 60_000;
    clock.set(boundary - 2);
    engine.decide(fresh("quin")).join();
    engine.decide(fresh("quin")).join();
    Decision refused = engine.decide(fresh("quin")).join();
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfterMs()).isEqualTo(2);
    clock.set(boundary);
    assertThat(engine.decide(fresh("quin")).join().allowed()).isTrue();
    assertThat(engine.decide(fresh("quin")).join().allowed()).isTrue();
    assertThat(engine.decide(fresh("quin")).join().allowed()).as("2 per window, 4 across the boundary").isFalse();
  }

  @Test
  void fixedWindowOfADayStartsAtMidnightInItsZone() {
    Rule daily = new Rule("daily", null, 1, Duration.ofDays(1), List.of(Dimension.RECIPIENT), null, null,
        Algorithm.FIXED_WINDOW, 0, null, java.time.ZoneId.of("Asia/Shanghai"));
    Engine engine = engine(new Policy("default", 1, List.of(daily)));
    long midnightShanghai = java.time.LocalDate.of(2026, 3, 1).atStartOfDay(java.time.ZoneId.of("Asia/Shanghai"))
        .toInstant().toEpochMilli();
    clock.set(midnightShanghai - 60_000);
    assertThat(engine.decide(fresh("rita")).join().allowed()).isTrue();
    Decision refused = engine.decide(fresh("rita")).join();
    assertThat(refused.retryAfterMs()).isEqualTo(60_000);
    clock.set(midnightShanghai);
    assertThat(engine.decide(fresh("rita")).join().allowed()).isTrue();
  }

  @Test
  void gcraAllowsABurstThenTheSustainedRate() {
    Rule gcra = Rule.of("gcra", 4, Duration.ofSeconds(4), Dimension.RECIPIENT).withAlgorithm(Algorithm.GCRA);
    Engine engine = engine(new Policy("default", 1, List.of(gcra)));
    for (int i = 0; i < 4; i++) {
      assertThat(engine.decide(fresh("sam")).join().allowed()).isTrue();
    }
    Decision refused = engine.decide(fresh("sam")).join();
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfterMs()).isEqualTo(1000);
    clock.advance(1000);
    assertThat(engine.decide(fresh("sam")).join().allowed()).isTrue();
    assertThat(engine.decide(fresh("sam")).join().allowed()).isFalse();
  }

  @Test
  void slidingCounterNeverAdmitsMoreThanTheLimitInAWindow() {
    Rule counter = new Rule("counter", null, 3, Duration.ofSeconds(60), List.of(Dimension.RECIPIENT), null, null,
        Algorithm.SLIDING_COUNTER, 6, null, null);
    Engine engine = engine(new Policy("default", 1, List.of(counter)));
    long t0 = clock.millis() / 10_000 * 10_000;
    clock.set(t0 + 5_000);
    for (int i = 0; i < 3; i++) {
      assertThat(engine.decide(fresh("tom")).join().allowed()).isTrue();
    }
    Decision refused = engine.decide(fresh("tom")).join();
    assertThat(refused.allowed()).isFalse();
    // the sub-window [t0, t0 + 10 s) stops overlapping the window at t0 + 10 s + 60 s - 1 ms
    assertThat(refused.retryAfterMs()).isEqualTo(70_000 - 1 - 5_000);
    clock.set(t0 + 69_998);
    assertThat(engine.decide(fresh("tom")).join().allowed()).isFalse();
    clock.set(t0 + 69_999);
    assertThat(engine.decide(fresh("tom")).join().allowed()).isTrue();
  }

  // ---- partitions ------------------------------------------------------------------------------

  @Test
  void aRefusalInASharedPartitionReleasesWhatTheRecipientPartitionRecorded() {
    Rule perSender = Rule.of("per-sender", 2, Duration.ofMinutes(1), Dimension.SENDER);
    Engine engine = engine(new Policy("default", 1, List.of(PER_MINUTE, perSender)));
    Message a = Message.builder("uma").sender("shop").build();
    Message b = Message.builder("vic").sender("shop").build();
    assertThat(engine.decide(a).join().allowed()).isTrue();
    assertThat(engine.decide(b).join().allowed()).isTrue();
    Decision third = engine.decide(a).join();
    assertThat(third.allowed()).isFalse();
    assertThat(third.blockedBy()).containsExactly("per-sender");
    assertThat(outcome(third, "recipient-per-minute").allowed()).isTrue();
    Decision otherSender = engine.decide(Message.builder("uma").sender("bank").build()).join();
    assertThat(otherSender.allowed()).isTrue();
    assertThat(outcome(otherSender, "recipient-per-minute").used()).as("the refused message was released").isEqualTo(1);
  }

  @Test
  void aRuleKeyedByADimensionAppliesOnlyToMessagesThatHaveIt() {
    Rule perChannel = Rule.of("per-recipient-channel", 1, Duration.ofMinutes(1), Dimension.RECIPIENT, Dimension.CHANNEL);
    Engine engine = engine(new Policy("default", 1, List.of(perChannel)));
    Message noChannel = Message.builder("walt").build();
    assertThat(engine.decide(noChannel).join().rules()).isEmpty();
    assertThat(engine.decide(Message.builder("walt").channel("sms").build()).join().allowed()).isTrue();
    assertThat(engine.decide(Message.builder("walt").channel("push").build()).join().allowed()).isTrue();
    assertThat(engine.decide(Message.builder("walt").channel("sms").build()).join().allowed()).isFalse();
  }

  @Test
  void batchesAreDecidedInOrder() {
    Engine engine = engine(SEED);
    List<Message> batch = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      batch.add(to("xena", "same"));
    }
    batch.add(Message.builder("yuri").sender("s").build());
    List<Decision> decisions = Store.all(engine.decideAll(batch, false)).join();
    assertThat(decisions).extracting(Decision::allowed).containsExactly(true, true, false, false, true);
    List<Decision> dry = Store.all(engine.decideAll(List.of(to("zoe", "a"), to("zoe", "a"), to("zoe", "a")), true)).join();
    assertThat(dry).extracting(Decision::allowed).containsExactly(true, true, true);
  }

  @Test
  void contentKeyAndContentAreDistinctIdentities() {
    Engine engine = engine(new Policy("default", 1, List.of(SAME_CONTENT_59S)));
    Message byText = Message.builder("amy").content("T1").build();
    Message byKey = Message.builder("amy").contentKey("T1").build();
    engine.decide(byText).join();
    engine.decide(byText).join();
    assertThat(engine.decide(byText).join().allowed()).isFalse();
    assertThat(engine.decide(byKey).join().allowed()).isTrue();
  }

  // ---- message ids -----------------------------------------------------------------------------

  private static Message withId(String recipient, String messageId) {
    return Message.builder(recipient).messageId(messageId).build();
  }

  @Test
  void aMessageIdDecidedTwiceIsCountedOnceAndAnsweredWithTheFirstDecision() {
    Engine engine = engine(SEED);
    Decision first = engine.decide(withId("ivy", "m-1")).join();
    clock.advance(5_000);
    Decision retry = engine.decide(withId("ivy", "m-1")).join();
    assertThat(first.allowed()).isTrue();
    assertThat(first.replayed()).isFalse();
    assertThat(retry.replayed()).isTrue();
    assertThat(retry.allowed()).isTrue();
    assertThat(retry.decisionId()).isEqualTo(first.decisionId());
    assertThat(retry.time()).isEqualTo(first.time());
    assertThat(retry.rules()).isEqualTo(first.rules());
    Decision other = engine.decide(withId("ivy", "m-2")).join();
    assertThat(other.replayed()).isFalse();
    assertThat(outcome(other, "recipient-per-minute").used()).as("m-1 counted once").isEqualTo(1);
    // the same id for another tenant or recipient is another message
    assertThat(engine.decide(withId("jon", "m-1")).join().replayed()).isFalse();
  }

  @Test
  void aDeniedMessageIdIsDecidedAgainOnRetry() {
    Engine engine = engine(new Policy("default", 1, List.of(Rule.of("one", 1, Duration.ofMinutes(1), Dimension.RECIPIENT))));
    assertThat(engine.decide(withId("kim", "a")).join().allowed()).isTrue();
    Decision denied = engine.decide(withId("kim", "b")).join();
    assertThat(denied.allowed()).isFalse();
    assertThat(engine.decide(withId("kim", "b")).join().replayed()).as("a denial recorded nothing").isFalse();
    clock.advance(60_000);
    Decision later = engine.decide(withId("kim", "b")).join();
    assertThat(later.allowed()).isTrue();
    assertThat(later.replayed()).isFalse();
    assertThat(engine.decide(withId("kim", "b")).join().replayed()).isTrue();
  }

  @Test
  void aMessageIdIsRememberedForThePolicysLongestWindow() {
    Engine engine = engine(new Policy("default", 1, List.of(PER_MINUTE)));
    Decision first = engine.decide(withId("lea", "m")).join();
    clock.advance(59_999);
    assertThat(engine.decide(withId("lea", "m")).join().decisionId()).isEqualTo(first.decisionId());
    clock.advance(1);
    Decision fresh = engine.decide(withId("lea", "m")).join();
    assertThat(fresh.replayed()).isFalse();
    assertThat(fresh.decisionId()).isNotEqualTo(first.decisionId());
  }

  @Test
  void releasingAMessageForgetsItsIdSoARetryIsCountedAgain() {
    Engine engine = engine(SEED);
    Decision first = engine.decide(withId("max", "m")).join();
    assertThat(engine.release(first.decisionId()).join()).isTrue();
    Decision retry = engine.decide(withId("max", "m")).join();
    assertThat(retry.replayed()).isFalse();
    assertThat(outcome(retry, "recipient-per-minute").used()).isZero();
    assertThat(engine.decide(withId("max", "m")).join().decisionId()).isEqualTo(retry.decisionId());
  }

  @Test
  void aRefusalInASharedPartitionForgetsTheMessageIdWithTheCounts() {
    Rule perSender = Rule.of("per-sender", 1, Duration.ofMinutes(1), Dimension.SENDER);
    Engine engine = engine(new Policy("default", 1, List.of(PER_MINUTE, perSender)));
    assertThat(engine.decide(Message.builder("ned").sender("shop").build()).join().allowed()).isTrue();
    Message m = Message.builder("ola").sender("shop").messageId("x").build();
    assertThat(engine.decide(m).join().allowed()).isFalse();
    Decision again = engine.decide(m).join();
    assertThat(again.replayed()).isFalse();
    assertThat(again.allowed()).isFalse();
    clock.advance(60_000);
    Decision admitted = engine.decide(m).join();
    assertThat(admitted.allowed()).isTrue();
    Decision replay = engine.decide(m).join();
    assertThat(replay.replayed()).isTrue();
    assertThat(replay.decisionId()).isEqualTo(admitted.decisionId());
    assertThat(engine.decide(Message.builder("pat").sender("shop").build()).join().allowed())
        .as("the replay recorded nothing in the sender's partition").isFalse();
  }

  @Test
  void aRetryStormOfOneMessageIdIsCountedOnce() throws Exception {
    Engine engine = engine(SEED);
    int threads = 8;
    List<Thread> storm = new ArrayList<>();
    java.util.Set<String> ids = java.util.concurrent.ConcurrentHashMap.newKeySet();
    java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
    for (int t = 0; t < threads; t++) {
      Thread th = new Thread(() -> {
        try {
          go.await();
          for (int i = 0; i < 20; i++) {
            Decision d = engine.decide(withId("quinn", "m-" + (i % 5))).join();
            assertThat(d.allowed()).isTrue();
            ids.add(i % 5 + "=" + d.decisionId());
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      th.start();
      storm.add(th);
    }
    go.countDown();
    for (Thread th : storm) {
      th.join(30_000);
    }
    assertThat(ids).as("one decision id per message id").hasSize(5);
    Decision next = engine.decide(fresh("quinn")).join();
    assertThat(outcome(next, "recipient-per-minute").used()).isEqualTo(5);
  }

  @Test
  void batchesRememberMessageIdsToo() {
    Engine engine = engine(SEED);
    List<Decision> ds = Store.all(engine.decideAll(List.of(withId("rex", "a"), withId("rex", "a"), withId("rex", "b")),
        false)).join();
    assertThat(ds.get(0).decisionId()).isEqualTo(ds.get(1).decisionId());
    assertThat(ds).extracting(Decision::replayed).containsExactly(false, true, false);
    assertThat(outcome(engine.decide(fresh("rex")).join(), "recipient-per-minute").used()).isEqualTo(2);
  }

  @Test
  void anyNodeCanReleaseByMessageIdOnceAndTheCountsComeBack() {
    Engine decider = engine(SEED);
    Engine other = engine(SEED); // another node on the same store: it never saw the decision
    for (int i = 0; i < 15; i++) {
      assertThat(decider.decide(withId("sam", "m-" + i)).join().allowed()).isTrue();
    }
    assertThat(decider.decide(withId("sam", "m-15")).join().allowed()).isFalse();
    clock.advance(10_000);
    assertThat(other.releaseMessage(withId("sam", "m-3")).join()).isTrue();
    assertThat(other.releaseMessage(withId("sam", "m-3")).join()).as("released once").isFalse();
    assertThat(decider.release(decider.decide(withId("sam", "m-3")).join().decisionId()).join()).isTrue();
    Decision retry = decider.decide(withId("sam", "m-3")).join();
    assertThat(retry.replayed()).as("a released id is decided afresh").isFalse();
    assertThat(retry.allowed()).isTrue();
    assertThat(decider.decide(withId("sam", "m-16")).join().allowed()).as("15 again").isFalse();
    assertThat(other.releaseMessage(withId("sam", "never-sent")).join()).isFalse();
    clock.advance(24 * 3600 * 1000L);
    assertThat(other.releaseMessage(withId("sam", "m-4")).join()).as("no longer remembered").isFalse();
  }
}
