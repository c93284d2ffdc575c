package dev.fcap.model;

import java.time.ZoneId;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The rules of one tenant. {@link #version()} grows with every accepted change.
 *
 * @param timeZone the zone of recipients whose messages carry none; null means UTC
 */
public record Policy(String tenant, long version, List<Rule> rules, ZoneId timeZone) {

  public Policy {
    Objects.requireNonNull(tenant, "tenant");
    rules = List.copyOf(rules);
  }

  public Policy(String tenant, long version, List<Rule> rules) {
    this(tenant, version, rules, null);
  }

  /** The zone a message's recipient is in: the message's own, else this policy's, else UTC. */
  public ZoneId zoneOf(Message message) {
    if (message.timeZone() != null) {
      return message.timeZone();
    }
    return timeZone != null ? timeZone : java.time.ZoneOffset.UTC;
  }

  public Optional<Rule> rule(String id) {
    return rules.stream().filter(r -> r.id().equals(id)).findFirst();
  }

  public Policy withVersion(long newVersion) {
    return new Policy(tenant, newVersion, rules, timeZone);
  }

  public Policy withRules(List<Rule> newRules) {
    return new Policy(tenant, version, newRules, timeZone);
  }
}
