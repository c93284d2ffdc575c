package dev.fcap.policy;

/**
 * One reason a policy was refused.
 *
 * @param tenant the policy's tenant, or null when the error is above policies
 * @param ruleId the rule, or null when the error is about the policy itself
 * @param field the offending field, e.g. {@code window} or {@code match.channel}
 */
public record PolicyError(String tenant, String ruleId, String field, String message) {

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    if (tenant != null) {
      b.append("policy '").append(tenant).append("'");
    }
    if (ruleId != null) {
      b.append(b.length() > 0 ? ", " : "").append("rule '").append(ruleId).append("'");
    }
    if (field != null) {
      b.append(b.length() > 0 ? ", " : "").append("field '").append(field).append("'");
    }
    return b.append(b.length() > 0 ? ": " : "").append(message).toString();
  }
}
