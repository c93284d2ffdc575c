package dev.fcap.engine;

import dev.fcap.model.Policy;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The compiled policy of each tenant, swapped whole: a decision reads one immutable map once, so it
 * sees one version of its tenant's rules from start to end; writers are serialised.
 */
final class PolicyRegistry {
  private volatile Map<String, CompiledPolicy> byTenant = Map.of();

  /** The tenant's policy in force, or null. */
  CompiledPolicy get(String tenant) {
    return byTenant.get(tenant);
  }

  synchronized void setAll(List<Policy> policies) {
    Map<String, CompiledPolicy> compiled = new HashMap<>();
    for (Policy p : policies) {
      compiled.put(p.tenant(), new CompiledPolicy(p));
    }
    byTenant = Map.copyOf(compiled);
  }

  synchronized void set(Policy policy) {
    Map<String, CompiledPolicy> next = new HashMap<>(byTenant);
    next.put(policy.tenant(), new CompiledPolicy(policy));
    byTenant = Map.copyOf(next);
  }

  Optional<Policy> policy(String tenant) {
    CompiledPolicy cp = byTenant.get(tenant);
    return cp == null ? Optional.empty() : Optional.of(cp.policy);
  }

  List<Policy> all() {
    return byTenant.values().stream().map(cp -> cp.policy).sorted(Comparator.comparing(Policy::tenant)).toList();
  }
}
