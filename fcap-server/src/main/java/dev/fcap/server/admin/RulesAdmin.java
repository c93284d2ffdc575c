package dev.fcap.server.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.engine.Engine;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.policy.PolicyError;
import dev.fcap.policy.PolicyException;
import dev.fcap.policy.PolicyParser;
import dev.fcap.server.audit.AuditLog;
import dev.fcap.server.audit.RuleDiff;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.metrics.ServerMetrics;
import dev.fcap.time.Clock;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rule administration: the one place policies change.
 *
 * <p>Every change is computed on a copy, validated whole by {@link PolicyParser} (an invalid change is
 * refused with every error, naming rule and field, and nothing of it is applied), given the next
 * version, persisted through the {@link RulesSource} (atomically) and only then handed to the engine,
 * so the next decision uses it. Changes are serialized; an {@code If-Match} version that is not the
 * current one is refused (412), so two admins cannot overwrite each other's edits unknowingly. Edits
 * never reset counts: the engine keeps counters across limit and window changes.
 *
 * <p><b>Versions only go up</b>, across API edits, hand edits and restarts: a hand edit gets the next
 * version though the file still says the old one, and the {@link RuleLedger} beside a rules file keeps
 * the versions in force and the history, so a restart continues from them; a file changed while the
 * server was down is taken as one more change. Every change is recorded (history, audit) with the
 * before and after of each rule it changed. Tested by {@code RuleVersionsIT}.
 */
public final class RulesAdmin implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RulesAdmin.class);
  /** {@code rejectedEdit} is read-only: a body read by GET may be sent back as it is. */
  private static final Set<String> POLICY_FIELDS = Set.of("tenant", "version", "rules", "rejectedEdit",
      "timeZone");
  private final RulesSource source;
  private final Engine engine;
  private final Clock clock;
  private final AuditLog audit;
  private final ServerMetrics metrics;
  private final int maxRules;
  private final RuleLedger ledger;
  private Map<String, Policy> policies = Map.of();

  public RulesAdmin(RulesSource source, Engine engine, Clock clock, AuditLog audit, ServerMetrics metrics,
      int historySize) {
    this(source, engine, clock, audit, metrics, historySize, PolicyParser.MAX_RULES);
  }

  /** @param maxRules rules per policy ({@code limits.maxRulesPerPolicy}) */
  public RulesAdmin(RulesSource source, Engine engine, Clock clock, AuditLog audit, ServerMetrics metrics,
      int historySize, int maxRules) {
    this.maxRules = maxRules;
    this.source = source;
    this.engine = engine;
    this.clock = clock;
    this.audit = audit;
    this.metrics = metrics;
    this.ledger = source instanceof FileRulesSource f ? RuleLedger.beside(f.file(), historySize)
        : RuleLedger.inMemory();
    metrics.gauge("fcap_rules_rejected_edit", "1 while the rules source holds a refused edit (the rules in force "
        + "are older; GET /v1/rules shows the errors), else 0", source, s -> s.rejectedEdit().isPresent() ? 1 : 0);
  }

  /** Loads the policies, hands them to the engine and starts watching the source. */
  public synchronized void start() throws IOException {
    Map<String, Policy> kept = ledger.inForce();
    Map<String, Policy> loaded = new LinkedHashMap<>();
    for (Policy p : source.load()) {
      Policy before = kept.get(p.tenant());
      long version;
      if (before == null) {
        version = Math.max(1, p.version());
        record(p.tenant(), version, "load", null, "startup", diffs(null, p));
      } else if (before.rules().equals(p.rules())) {
        version = Math.max(Math.max(1, p.version()), before.version());
      } else {
        version = Math.max(p.version(), before.version() + 1); // edited while the server was down
        record(p.tenant(), version, "reload", null, "file", diffs(before, p));
      }
      loaded.put(p.tenant(), p.withVersion(version));
    }
    install(loaded);
    source.watch(this::reloaded);
  }

  public String describeSource() {
    return source.describe();
  }

  /** The tenant's policy; an empty version-0 policy for a tenant without rules. */
  public synchronized Policy policy(String tenant) {
    Policy p = policies.get(tenant);
    return p != null ? p : new Policy(tenant, 0, List.of());
  }

  public synchronized List<Policy> policies() {
    return List.copyOf(policies.values());
  }

  /**
   * The refused edit of the rules source, if it still holds one, as JSON for {@code GET /v1/rules}:
   * its time and errors. A caller limited to some tenants sees only the errors of {@code tenant} and
   * how many others there are, never another tenant's rule names.
   */
  public Optional<ObjectNode> rejectedEdit(String tenant, boolean allTenants) {
    return source.rejectedEdit().map(r -> {
      ObjectNode n = JsonNodeFactory.instance.objectNode();
      n.put("time", r.time());
      var list = n.putArray("errors");
      int hidden = 0;
      for (PolicyError e : r.errors()) {
        if (!allTenants && !tenant.equals(e.tenant())) {
          hidden++;
          continue;
        }
        ObjectNode o = list.addObject();
        o.put("tenant", e.tenant());
        o.put("rule", e.ruleId());
        o.put("field", e.field());
        o.put("message", e.message());
      }
      n.put("otherErrors", hidden);
      n.put("message", "the rules source holds an edit refused as invalid; the rules in force are the last valid "
          + "ones (version " + policy(tenant).version() + ") until it is fixed");
      return n;
    });
  }

  /** Newest first. */
  public synchronized List<RuleChange> history(String tenant) {
    List<RuleChange> all = ledger.history();
    List<RuleChange> out = new ArrayList<>();
    for (int i = all.size() - 1; i >= 0; i--) {
      if (all.get(i).tenant().equals(tenant)) {
        out.add(all.get(i));
      }
    }
    return out;
  }

  /** Parses a whole policy body {@code {rules: [...]}} without applying it. */
  public Policy validate(String tenant, JsonNode body) {
    if (body == null || !body.isObject()) {
      throw ApiException.badRequest("invalid_policy", "expected a JSON object {\"rules\": [...]}", null);
    }
    List<PolicyError> errors = new ArrayList<>();
    body.fieldNames().forEachRemaining(f -> {
      if (!POLICY_FIELDS.contains(f)) {
        errors.add(new PolicyError(tenant, null, f, "unknown field '" + f + "'"));
      }
    });
    if (body.hasNonNull("tenant") && !body.get("tenant").asText().equals(tenant)) {
      errors.add(new PolicyError(tenant, null, "tenant", "the body is for tenant '" + body.get("tenant").asText()
          + "' but the request for tenant '" + tenant + "'"));
    }
    // null is refused, not read as no rules: a client that lost its list would otherwise delete every rule
    if (!body.hasNonNull("rules")) {
      errors.add(new PolicyError(tenant, null, "rules", "rules is required (a list, possibly empty)"));
    }
    if (!errors.isEmpty()) {
      throw refused(new PolicyException(errors));
    }
    List<Rule> rules;
    java.time.ZoneId timeZone;
    try {
      rules = PolicyParser.parseRules(tenant, body.get("rules"));
      timeZone = PolicyParser.parseTimeZone(tenant, body.get("timeZone"));
    } catch (PolicyException e) {
      throw refused(e);
    }
    if (rules.size() > maxRules) {
      throw ApiException.badRequest("too_many_rules", "a policy holds at most " + maxRules
          + " rules (limits.maxRulesPerPolicy)", "rules");
    }
    return new Policy(tenant, 0, rules, timeZone);
  }

  /** Replaces the tenant's whole policy. */
  public synchronized Policy replace(String tenant, JsonNode body, Long ifMatch, String who) {
    Policy parsed = validate(tenant, body);
    return commit(tenant, ifMatch, parsed.rules(), parsed.timeZone(), who, "replace", null);
  }

  /** Adds one rule; its id must be new. */
  public synchronized Policy add(String tenant, JsonNode rule, Long ifMatch, String who) {
    Rule r = parseRule(tenant, rule);
    Policy current = policy(tenant);
    if (current.rule(r.id()).isPresent()) {
      throw new ApiException(409, "rule_exists", "rule '" + r.id() + "' already exists; use PUT /v1/rules/" + r.id()
          + " to change it", "id");
    }
    List<Rule> rules = new ArrayList<>(current.rules());
    rules.add(r);
    return commit(tenant, ifMatch, rules, policy(tenant).timeZone(), who, "add", r.id());
  }

  /** Replaces (or creates) the rule {@code id}. */
  public synchronized Policy put(String tenant, String id, JsonNode rule, Long ifMatch, String who) {
    if (rule != null && rule.isObject() && rule.hasNonNull("id") && !rule.get("id").asText().equals(id)) {
      throw ApiException.badRequest("invalid_rule", "the body's id '" + rule.get("id").asText()
          + "' differs from the path's '" + id + "'", "id");
    }
    if (rule != null && rule.isObject() && !rule.has("id")) {
      ((com.fasterxml.jackson.databind.node.ObjectNode) rule).put("id", id);
    }
    Rule r = parseRule(tenant, rule);
    List<Rule> rules = new ArrayList<>(policy(tenant).rules());
    int at = indexOf(rules, id);
    if (at < 0) {
      rules.add(r);
    } else {
      rules.set(at, r);
    }
    return commit(tenant, ifMatch, rules, policy(tenant).timeZone(), who, at < 0 ? "add" : "update", id);
  }

  /** Deletes the rule {@code id}. */
  public synchronized Policy delete(String tenant, String id, Long ifMatch, String who) {
    List<Rule> rules = new ArrayList<>(policy(tenant).rules());
    int at = indexOf(rules, id);
    if (at < 0) {
      throw new ApiException(404, "rule_not_found", "tenant '" + tenant + "' has no rule '" + id + "'", "id");
    }
    rules.remove(at);
    return commit(tenant, ifMatch, rules, policy(tenant).timeZone(), who, "delete", id);
  }

  private static int indexOf(List<Rule> rules, String id) {
    for (int i = 0; i < rules.size(); i++) {
      if (rules.get(i).id().equals(id)) {
        return i;
      }
    }
    return -1;
  }

  private Rule parseRule(String tenant, JsonNode rule) {
    if (rule == null || !rule.isObject()) {
      throw ApiException.badRequest("invalid_rule", "expected a rule object {id, limit, window, key, ...}", null);
    }
    try {
      return PolicyParser.parseRule(tenant, rule);
    } catch (PolicyException e) {
      throw refused(e);
    }
  }

  private Policy commit(String tenant, Long ifMatch, List<Rule> rules, java.time.ZoneId timeZone, String who,
      String action, String ruleId) {
    Policy current = policy(tenant);
    if (ifMatch != null && ifMatch != current.version()) {
      throw new ApiException(412, "version_conflict", "the policy of tenant '" + tenant + "' is at version "
          + current.version() + ", not " + ifMatch + "; read it again and reapply your change", "If-Match");
    }
    if (rules.size() > maxRules) {
      throw ApiException.badRequest("too_many_rules", "a policy holds at most " + maxRules
          + " rules (limits.maxRulesPerPolicy)", "rules");
    }
    Policy next = new Policy(tenant, current.version() + 1, rules, timeZone);
    Map<String, Policy> all = new LinkedHashMap<>(policies);
    all.put(tenant, next);
    try {
      source.save(List.copyOf(all.values()));
    } catch (RulesConflictException e) {
      throw new ApiException(409, "rules_changed", e.getMessage(), null);
    } catch (IOException e) {
      LOG.error("cannot persist the rules to {}: {}", source.describe(), e.toString());
      throw new ApiException(500, "persist_failed", "the change could not be saved (" + e.getMessage()
          + "); nothing was applied", null);
    }
    engine.setPolicy(next);
    policies = all;
    metrics.policyVersion(tenant, next.version());
    keepInForce();
    record(tenant, next.version(), action, ruleId, who, diffs(current, next));
    LOG.info("policy of tenant '{}' is now version {} ({} {} by {})", tenant, next.version(), action,
        ruleId == null ? "" : ruleId, who);
    return next;
  }

  /** A hand edit of the file or a change by another node: applied as it is, versions moving forward. */
  synchronized void reloaded(List<Policy> fromSource) {
    Map<String, Policy> next = new LinkedHashMap<>();
    for (Policy p : fromSource) {
      Policy current = policies.get(p.tenant());
      if (current != null && current.rules().equals(p.rules())) {
        next.put(p.tenant(), current);
        continue;
      }
      long version = Math.max(p.version(), current == null ? 1 : current.version() + 1);
      next.put(p.tenant(), p.withVersion(version));
      record(p.tenant(), version, "reload", null, "file", diffs(current, p));
    }
    for (String gone : policies.keySet()) {
      if (!next.containsKey(gone)) {
        record(gone, policies.get(gone).version() + 1, "reload", null, "file", diffs(policies.get(gone), null));
      }
    }
    install(next);
  }

  private void install(Map<String, Policy> next) {
    engine.setPolicies(List.copyOf(next.values()));
    policies = next;
    next.values().forEach(p -> metrics.policyVersion(p.tenant(), p.version()));
    keepInForce();
  }

  /** The ledger follows the policies in force; a ledger that cannot be written leaves them in force. */
  private void keepInForce() {
    try {
      ledger.inForce(policies.values());
    } catch (IOException e) {
      LOG.error("cannot keep the rule versions beside {}: {} (a restart may number them from the file)",
          source.describe(), e.toString());
    }
  }

  private void record(String tenant, long version, String action, String ruleId, String who, List<RuleDiff> changes) {
    RuleChange c = new RuleChange(tenant, version, clock.millis(), who, action, ruleId, changes);
    try {
      ledger.append(c);
    } catch (IOException e) {
      LOG.error("cannot keep the rules history beside {}: {}", source.describe(), e.toString());
    }
    audit.admin("rules", c.time(), tenant, null, version, who, action + (ruleId == null ? "" : " " + ruleId), changes);
  }

  /** Each rule that differs between {@code before} and {@code after} (either may be null: no policy). */
  static List<RuleDiff> diffs(Policy before, Policy after) {
    Map<String, JsonNode[]> byId = new LinkedHashMap<>();
    if (before != null) {
      before.rules().forEach(r -> byId.computeIfAbsent(r.id(), k -> new JsonNode[2])[0] = PolicyParser.toTree(r));
    }
    if (after != null) {
      after.rules().forEach(r -> byId.computeIfAbsent(r.id(), k -> new JsonNode[2])[1] = PolicyParser.toTree(r));
    }
    List<RuleDiff> out = new ArrayList<>();
    byId.forEach((id, pair) -> {
      if (!java.util.Objects.equals(pair[0], pair[1])) {
        out.add(new RuleDiff(id, pair[0], pair[1]));
      }
    });
    return out;
  }

  private static ApiException refused(PolicyException e) {
    PolicyError first = e.errors().get(0);
    return new ApiException(400, "invalid_policy", e.getMessage(), first.field(), e.errors());
  }

  @Override
  public void close() {
    source.close();
  }
}
