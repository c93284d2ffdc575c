package dev.fcap.model;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The rules of one tenant. {@link #version()} grows with every accepted change. */
public record Policy(String tenant, long version, List<Rule> rules) {

  public Policy {
    Objects.requireNonNull(tenant, "tenant");
    rules = List.copyOf(rules);
  }

  public Optional<Rule> rule(String id) {
    return rules.stream().filter(r -> r.id().equals(id)).findFirst();
  }

  public Policy withVersion(long newVersion) {
    return new Policy(tenant, newVersion, rules);
  }

  public Policy withRules(List<Rule> newRules) {
    return new Policy(tenant, version, newRules);
  }
}
