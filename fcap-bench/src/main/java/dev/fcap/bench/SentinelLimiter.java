package dev.fcap.bench;

import com.alibaba.csp.sentinel.Entry;
import com.alibaba.csp.sentinel.EntryType;
import com.alibaba.csp.sentinel.SphU;
import com.alibaba.csp.sentinel.slots.block.BlockException;
import com.alibaba.csp.sentinel.slots.block.RuleConstant;
import com.alibaba.csp.sentinel.slots.block.flow.param.ParamFlowRule;
import com.alibaba.csp.sentinel.slots.block.flow.param.ParamFlowRuleManager;
import dev.fcap.model.Message;
import java.time.Duration;
import java.util.List;

/**
 * Sentinel: hot-parameter flow control (sentinel-parameter-flow-control), the only Sentinel rule
 * that limits per value. A plain {@code FlowRule} limits a whole resource by QPS over a 1-second
 * window, and a resource per recipient is impossible (Sentinel stops checking rules beyond 6,000
 * resources). Resource {@code fcap-recipient} is entered with the recipient as parameter under two
 * rules (15 per 60 s, 50 per 86,400 s); resource {@code fcap-content} with the (recipient, content)
 * pair under two rules (2 per 59 s, 5 per 3,540 s). Each rule is a token bucket per value with a
 * bounded LRU of values (at most 200,000 per rule: an evicted value starts afresh, full). The rules
 * are global static state; a refusal by a later rule or resource keeps the tokens earlier ones took.
 */
final class SentinelLimiter implements CapLimiter {
  private static final String RECIPIENT = "fcap-recipient";
  private static final String CONTENT = "fcap-content";

  SentinelLimiter() {
    ParamFlowRuleManager.loadRules(List.of(
        rule(RECIPIENT, SeedPolicy.PER_MINUTE, SeedPolicy.MINUTE),
        rule(RECIPIENT, SeedPolicy.PER_DAY, SeedPolicy.DAY),
        rule(CONTENT, SeedPolicy.SAME_CONTENT_59S, SeedPolicy.S59),
        rule(CONTENT, SeedPolicy.SAME_CONTENT_59M, SeedPolicy.M59)));
  }

  private static ParamFlowRule rule(String resource, int limit, Duration window) {
    return new ParamFlowRule(resource).setParamIdx(0).setGrade(RuleConstant.FLOW_GRADE_QPS)
        .setCount(limit).setDurationInSec(window.toSeconds());
  }

  @Override
  public boolean tryAcquire(Message m) {
    String recipient = m.recipient();
    Entry r;
    try {
      r = SphU.entry(RECIPIENT, EntryType.IN, 1, recipient);
    } catch (BlockException e) {
      return false;
    }
    RecipientContent key = new RecipientContent(recipient, m.content());
    try {
      Entry c = SphU.entry(CONTENT, EntryType.IN, 1, key);
      c.exit(1, key);
      return true;
    } catch (BlockException e) {
      return false;
    } finally {
      r.exit(1, recipient);
    }
  }
}
