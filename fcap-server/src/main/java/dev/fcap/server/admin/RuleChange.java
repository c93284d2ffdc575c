package dev.fcap.server.admin;

/**
 * One accepted change of a tenant's policy, as the history shows it.
 *
 * @param action {@code replace}, {@code add}, {@code update}, {@code delete}, {@code reload} (hand edit
 *     or another node) or {@code load} (start)
 * @param who the API key name ({@code local} without keys, {@code file} for a hand edit)
 */
public record RuleChange(String tenant, long version, long time, String who, String action, String ruleId) {}
