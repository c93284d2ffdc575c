package dev.fcap.engine;

import dev.fcap.model.Decision;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcome;
import dev.fcap.store.Clock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionAnswer;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Builds a {@link Decision} from the store's answers: each rule's outcome in policy order, the
 * enforced rules that block, the delay after which every one of them would admit, and the decision
 * id (sealed over the release record when the decision is releasable, random otherwise).
 */
final class DecisionAssembly {
  private static final HexFormat HEX = HexFormat.of();
  private final DecisionIds ids;
  private final Clock clock;
  /** How long admitted decisions stay releasable by decision id: -1 the policy's longest window, 0 never. */
  private final long releaseHorizonMs;

  DecisionAssembly(DecisionIds ids, Clock clock, long releaseHorizonMs) {
    this.ids = ids;
    this.clock = clock;
    this.releaseHorizonMs = releaseHorizonMs;
  }

  /** The decision on a message to which no rule applies: admitted, and releasable (it undoes nothing) when releases are on. */
  Decision unrestricted(Prepared p) {
    String id = null;
    if (p.releasing() && p.op() == Operation.DECIDE) {
      long horizon = releaseHorizonMs < 0 ? CompiledPolicy.MAX_HORIZON_MS : releaseHorizonMs;
      byte[] tenant = p.policy() != null ? p.policy().tenantUtf8 : p.message().tenant().getBytes(StandardCharsets.UTF_8);
      long now = p.time() == PartitionRequest.STORE_TIME ? clock.millis() : p.time();
      byte[] unique = new byte[16]; // no record is kept under it: it only makes the id unique
      ThreadLocalRandom.current().nextBytes(unique);
      id = ids.seal(Keys.nothingPartition(tenant), unique, now + horizon);
    }
    return new Decision(true, id != null ? id : randomId(), 0, List.of(), List.of(), List.of(), false, clock.millis(),
        p.policy() == null ? 0 : p.policy().policy.version());
  }

  /** The decision on {@code p} from the answers of its partitions (null: not reached by a replayed decision). */
  Decision decision(Prepared p, PartitionAnswer[] results) {
    CompiledPolicy.Plan plan = p.plan();
    RuleOutcome[] outcomes = new RuleOutcome[plan.rules.length]; // one copy into the Decision's list, no ArrayList
    int reported = 0;
    List<String> blocked = List.of();
    List<String> shadowBlocked = List.of();
    long retryAfter = 0;
    for (int i = 0; i < plan.rules.length; i++) {
      PartitionAnswer r = results[plan.rulePartition[i]];
      if (r == null) {
        continue; // a replay reports the rules of the partition that remembered it
      }
      Rule rule = p.policy().rule(plan.rules[i]);
      int at = plan.ruleOffset[i];
      long used = r.used(at);
      long retryAt = r.retryAt(at);
      boolean allowed = r.admits(at);
      long ruleRetry = allowed ? 0 : retryAt == PartitionResult.NEVER ? -1 : retryAt - r.time();
      outcomes[reported++] = new RuleOutcome(rule.id(), rule.limit(), rule.windowMs(), used,
          Math.max(0, rule.limit() - used), allowed, rule.enforced(), ruleRetry);
      if (!allowed) {
        if (rule.enforced()) {
          blocked = append(blocked, rule.id());
          retryAfter = retryAfter < 0 || ruleRetry < 0 ? -1 : Math.max(retryAfter, ruleRetry);
        } else {
          shadowBlocked = append(shadowBlocked, rule.id());
        }
      }
    }
    boolean allowed = blocked.isEmpty();
    boolean degraded = false;
    for (PartitionAnswer r : results) {
      degraded |= r != null && r.degraded();
    }
    String id = allowed ? releasableId(p, results[0]) : null;
    List<RuleOutcome> rules = List.of(reported == outcomes.length ? outcomes : Arrays.copyOf(outcomes, reported));
    boolean replayed = results[0].replayOf() != null;
    return new Decision(allowed, id != null ? id : randomId(), retryAfter, blocked, shadowBlocked, rules, degraded,
        results[0].time(), p.policy().policy.version(), replayed);
  }

  /**
   * The id an admitted decision is released by, sealed over its release record; null when it has
   * none. A replay answers the id of the first decision: the same record sealed the same way.
   */
  private String releasableId(Prepared p, PartitionAnswer first) {
    if (p.recordKey() == null || !p.releasing()) {
      return null;
    }
    boolean releasable = first.replayOf() != null
        ? ReleaseRecord.decode(first.replayOf().getBytes(StandardCharsets.ISO_8859_1)) != null
        : p.releasable();
    if (!releasable) {
      return null;
    }
    long expiresAt = first.time() + p.recordHorizonMs();
    return p.sealedTail() != null
        ? ids.seal(p.firstPartition(), p.recordKey(), expiresAt, first.time(), first.incarnation(), p.sealedTail())
        : ids.seal(p.firstPartition(), p.recordKey(), expiresAt);
  }

  /**
   * Reports each rule's verdict to {@code verdicts} (a caller that tallies instead of building a
   * {@link Decision}); whether the message was admitted.
   */
  static boolean report(CompiledPolicy policy, CompiledPolicy.Plan plan, PartitionAnswer[] results,
      Engine.RuleVerdicts verdicts) {
    boolean allowed = true;
    for (int i = 0; i < plan.rules.length; i++) {
      PartitionAnswer r = results[plan.rulePartition[i]];
      if (r != null) { // null: a replayed decision reports the rules of the partition that remembered it
        boolean admits = r.admits(plan.ruleOffset[i]);
        verdicts.rule(plan.rules[i], admits);
        allowed &= admits || !policy.rule(plan.rules[i]).enforced();
      }
    }
    return allowed;
  }

  /**
   * The id of a decision that cannot be released: 96 random bits in hex (never opens as a sealed id:
   * the MAC refuses it). Not {@code String.format}, which costs a large share of a refusal's CPU.
   */
  private static String randomId() {
    byte[] random = new byte[12];
    ThreadLocalRandom.current().nextBytes(random);
    return HEX.formatHex(random);
  }

  /** An immutable list plus one id; lists of blocking rules are short and usually empty. */
  private static List<String> append(List<String> list, String id) {
    if (list.isEmpty()) {
      return List.of(id);
    }
    String[] grown = list.toArray(new String[list.size() + 1]);
    grown[list.size()] = id;
    return List.of(grown);
  }
}
