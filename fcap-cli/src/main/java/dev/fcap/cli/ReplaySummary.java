package dev.fcap.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.engine.Engine;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What a replay found: per rule how often it applied and refused, and the totals. */
final class ReplaySummary {

  /** Counts of one rule. */
  private static final class RuleCounts {
    final String tenant;
    final Rule rule;
    long applied;
    long blocked;

    RuleCounts(String tenant, Rule rule) {
      this.tenant = tenant;
      this.rule = rule;
    }
  }

  private final Map<String, RuleCounts> rules = new LinkedHashMap<>();
  /**
   * Per tenant, its rules' counts in policy order, indexed as a decision's verdicts name them: the
   * replay adds every row here, so a row costs no map lookup per rule (a lookup per rule and row takes a
   * seventh of a deciding thread's time).
   */
  private final Map<String, RuleCounts[]> byTenant = new java.util.HashMap<>();
  private String lastTenant;
  private RuleCounts[] lastCounts;
  /** Counts one rule of the row being added into {@link #lastCounts}: one object, not one per row. */
  private final Engine.RuleVerdicts count = (index, allowed, enforced) -> {
    RuleCounts c = lastCounts[index];
    c.applied++;
    // an enforced rule's count-only message or an override was not blocked by it
    if (!allowed && (enforced || !c.rule.enforced())) {
      c.blocked++;
    }
  };
  private long rows;
  private long admitted;
  private long deferred;

  ReplaySummary(List<Policy> policies) {
    for (Policy p : policies) {
      RuleCounts[] ofTenant = new RuleCounts[p.rules().size()];
      for (int i = 0; i < ofTenant.length; i++) {
        Rule r = p.rules().get(i);
        ofTenant[i] = new RuleCounts(p.tenant(), r);
        rules.put(p.tenant() + "/" + r.id(), ofTenant[i]);
      }
      byTenant.put(p.tenant(), ofTenant);
    }
  }

  /** Adds row {@code row} of a decided batch, a row of {@code tenant}. */
  void add(String tenant, BatchVerdicts decided, int row) {
    rows++;
    if (decided.allowed(row)) {
      admitted++;
    }
    if (decided.bookedAt(row) != 0) {
      deferred++;
    }
    if (!tenant.equals(lastTenant)) {
      lastTenant = tenant;
      lastCounts = byTenant.get(tenant); // null for a tenant without rules: then none applied
    }
    decided.forEachApplied(row, count);
  }

  long rows() {
    return rows;
  }

  void printText(PrintWriter out, double seconds) {
    out.printf("rows      %,d%nadmitted  %,d%nblocked   %,d%n", rows, admitted, rows - admitted);
    if (deferred > 0) {
      out.printf("deferred  %,d (blocked now, booked for later)%n", deferred);
    }
    out.printf("%nrule%s  mode     applied       blocked%n", " ".repeat(Math.max(0, width() - 4)));
    for (RuleCounts c : rules.values()) {
      String name = (c.tenant.equals("default") ? "" : c.tenant + "/") + c.rule.id();
      out.printf("%-" + width() + "s  %-7s  %,12d  %,12d%s%n", name, c.rule.mode().id(), c.applied, c.blocked,
          c.rule.enforced() ? "" : "  (would have blocked)");
    }
    out.printf("%n%.1f s, %,.0f rows/s%n", seconds, seconds > 0 ? rows / seconds : 0.0);
  }

  private int width() {
    return rules.values().stream().mapToInt(c -> c.rule.id().length() + c.tenant.length() + 1).max().orElse(4);
  }

  void printJson(PrintWriter out, double seconds) throws java.io.IOException {
    ObjectMapper json = new ObjectMapper();
    ObjectNode root = json.createObjectNode();
    root.put("rows", rows);
    root.put("admitted", admitted);
    root.put("blocked", rows - admitted);
    root.put("deferred", deferred);
    var list = root.putArray("rules");
    for (RuleCounts c : rules.values()) {
      ObjectNode r = list.addObject();
      r.put("tenant", c.tenant);
      r.put("id", c.rule.id());
      r.put("mode", c.rule.mode().id());
      r.put("applied", c.applied);
      r.put(c.rule.enforced() ? "blocked" : "wouldHaveBlocked", c.blocked);
    }
    root.put("seconds", Math.round(seconds * 1000) / 1000.0);
    root.put("rowsPerSecond", seconds > 0 ? Math.round(rows / seconds) : 0);
    out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(root));
  }
}
