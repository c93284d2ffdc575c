package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Condition;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcome;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Exactness of {@code sliding-log}: the engine against a brute-force oracle that keeps every
 * admitted event, on random policies and random traffic, decision by decision.
 */
class SlidingLogOracleProperties {

  /** Every admitted event; the oracle recounts windows from scratch each time. */
  private record Event(Message message, long time, String decisionId) {}

  @Property(tries = 150)
  void engineAgreesWithTheOracleOnEveryDecision(@ForAll long seed) {
    Random random = new Random(seed);
    Policy policy = randomPolicy(random);
    ManualClock clock = new ManualClock();
    Engine engine = Engine.builder(MemoryStore.builder().clock(clock).segments(2).build())
        .clock(clock).callerTime(true).policy(policy).build();
    List<Event> admitted = new ArrayList<>();
    long now = ManualClock.START;
    for (int step = 0; step < 300; step++) {
      now += random.nextInt(4) == 0 ? 0 : random.nextInt(15_000);
      clock.set(now);
      if (random.nextInt(20) == 0 && !admitted.isEmpty()) {
        Event e = admitted.remove(random.nextInt(admitted.size()));
        assertThat(engine.release(e.decisionId()).join()).isTrue();
        continue;
      }
      Message m = randomMessage(random);
      boolean dryRun = random.nextInt(10) == 0;
      Decision d = dryRun ? engine.checkAt(m, now).join() : engine.decideAt(m, now).join();
      Decision expected = oracle(policy, admitted, m, now);
      assertThat(d.allowed()).as("step %d: %s", step, m).isEqualTo(expected.allowed());
      assertThat(d.blockedBy()).as("step %d", step).containsExactlyInAnyOrderElementsOf(expected.blockedBy());
      assertThat(d.shadowBlockedBy()).as("step %d", step).containsExactlyInAnyOrderElementsOf(expected.shadowBlockedBy());
      assertThat(d.retryAfterMs()).as("step %d", step).isEqualTo(expected.retryAfterMs());
      assertThat(d.rules()).as("step %d", step).containsExactlyInAnyOrderElementsOf(expected.rules());
      if (d.allowed() && !dryRun) {
        admitted.add(new Event(m, now, d.decisionId()));
      }
    }
  }

  private static Decision oracle(Policy policy, List<Event> admitted, Message m, long now) {
    List<RuleOutcome> outcomes = new ArrayList<>();
    List<String> blocked = new ArrayList<>();
    List<String> shadow = new ArrayList<>();
    long retry = 0;
    for (Rule rule : policy.rules()) {
      if (!applies(rule, m)) {
        continue;
      }
      List<Event> same = admitted.stream()
          .filter(e -> applies(rule, e.message()) && sameKey(rule, e.message(), m))
          .filter(e -> e.time() > now - rule.windowMs())
          .sorted((a, b) -> Long.compare(a.time(), b.time()))
          .toList();
      long used = same.stream().mapToLong(e -> e.message().cost()).sum();
      boolean allowed = used + m.cost() <= rule.limit();
      long ruleRetry = 0;
      if (!allowed) {
        ruleRetry = -1;
        long left = used;
        for (Event e : same) {
          left -= e.message().cost();
          if (m.cost() <= rule.limit() && left + m.cost() <= rule.limit()) {
            ruleRetry = e.time() + rule.windowMs() - now;
            break;
          }
        }
        if (rule.enforced()) {
          blocked.add(rule.id());
          retry = retry < 0 || ruleRetry < 0 ? -1 : Math.max(retry, ruleRetry);
        } else {
          shadow.add(rule.id());
        }
      }
      outcomes.add(new RuleOutcome(rule.id(), rule.limit(), rule.windowMs(), used, Math.max(0, rule.limit() - used),
          allowed, rule.enforced(), ruleRetry));
    }
    return new Decision(blocked.isEmpty(), "", blocked.isEmpty() ? 0 : retry, blocked, shadow, outcomes, false, now, 0);
  }

  private static boolean applies(Rule rule, Message m) {
    for (Dimension d : rule.key()) {
      if (d == Dimension.CONTENT ? m.content() == null : d.valueOf(m) == null) {
        return false;
      }
    }
    return rule.appliesTo(m);
  }

  private static boolean sameKey(Rule rule, Message a, Message b) {
    if (!a.tenant().equals(b.tenant())) {
      return false;
    }
    for (Dimension d : rule.key()) {
      String va = d == Dimension.CONTENT ? a.content() : d.valueOf(a);
      String vb = d == Dimension.CONTENT ? b.content() : d.valueOf(b);
      if (!Objects.equals(va, vb)) {
        return false;
      }
    }
    return true;
  }

  private static Policy randomPolicy(Random random) {
    List<List<Dimension>> keys = List.of(
        List.of(Dimension.RECIPIENT),
        List.of(Dimension.RECIPIENT, Dimension.CONTENT),
        List.of(Dimension.RECIPIENT, Dimension.CHANNEL),
        List.of(Dimension.SENDER),
        List.of(Dimension.CHANNEL, Dimension.CONTENT));
    int n = 1 + random.nextInt(5);
    List<Rule> rules = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < n; i++) {
      List<Dimension> key = keys.get(random.nextInt(random.nextInt(3) == 0 ? keys.size() : 2));
      Rule r = new Rule("r" + i, null, 1 + random.nextInt(8), Duration.ofMillis(1000 + random.nextInt(180_000)),
          key, null, null, null, 0, random.nextInt(5) == 0 ? Mode.SHADOW : Mode.ENFORCE, null);
      if (random.nextInt(4) == 0) {
        r = r.withMatch(new Condition(Map.of(Dimension.CHANNEL, Set.of("sms"))));
      }
      if (random.nextInt(4) == 0) {
        r = r.withExempt(new Condition(Map.of(Dimension.CATEGORY, Set.of("otp"))));
      }
      if (ids.add(r.id())) {
        rules.add(r);
      }
    }
    return new Policy("default", 1, rules);
  }

  private static Message randomMessage(Random random) {
    Message.Builder b = Message.builder("rcpt-" + random.nextInt(3));
    if (random.nextInt(5) != 0) {
      b.content("content-" + random.nextInt(3));
    }
    if (random.nextInt(4) != 0) {
      b.channel(random.nextBoolean() ? "sms" : "push");
    }
    if (random.nextInt(3) != 0) {
      b.sender("sender-" + random.nextInt(2));
    }
    if (random.nextInt(6) == 0) {
      b.category("otp");
    }
    b.cost(random.nextInt(6) == 0 ? 1 + random.nextInt(3) : 1);
    return b.build();
  }
}
