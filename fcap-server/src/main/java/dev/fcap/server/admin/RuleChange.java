package dev.fcap.server.admin;

import dev.fcap.server.audit.RuleDiff;
import java.util.List;

/**
 * One accepted change of a tenant's policy, as the history shows it.
 *
 * @param action {@code replace}, {@code add}, {@code update}, {@code delete}, {@code reload} (hand edit
 *     or another node) or {@code load} (the first start on a policy)
 * @param who the API key name ({@code local} without keys, {@code file} for a hand edit)
 * @param changes each rule the change touched, before and after
 */
public record RuleChange(String tenant, long version, long time, String who, String action, String ruleId,
    List<RuleDiff> changes) {
  public RuleChange {
    changes = List.copyOf(changes);
  }
}
