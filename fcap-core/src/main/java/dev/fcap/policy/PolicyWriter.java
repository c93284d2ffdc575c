package dev.fcap.policy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Condition;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Priority;
import dev.fcap.model.Rule;
import java.util.List;

/**
 * Writes policies back to the tree and YAML form that {@link PolicyParser} reads, leaving defaults out, so
 * that parsing what it writes gives the same policies.
 */
final class PolicyWriter {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private PolicyWriter() {}

  /** The tree form of policies, as {@link PolicyParser#parseTree} reads it back. */
  static ObjectNode toTree(List<Policy> policies) {
    ObjectNode root = YAML.createObjectNode();
    var list = root.putArray("policies");
    for (Policy p : policies) {
      list.add(toTree(p));
    }
    return root;
  }

  /** One policy as a tree. */
  static ObjectNode toTree(Policy p) {
    ObjectNode node = YAML.createObjectNode();
    node.put("tenant", p.tenant());
    node.put("version", p.version());
    if (p.timeZone() != null) {
      node.put("timeZone", p.timeZone().getId());
    }
    var rules = node.putArray("rules");
    for (Rule r : p.rules()) {
      rules.add(toTree(r));
    }
    return node;
  }

  /** One rule as a tree; defaults are left out. */
  static ObjectNode toTree(Rule r) {
    ObjectNode n = YAML.createObjectNode();
    n.put("id", r.id());
    if (r.description() != null) {
      n.put("description", r.description());
    }
    if (r.isSendWindow()) {
      n.set("sendWindow", SendWindows.toTree(r.sendWindow(), YAML));
      putCondition(n, "match", r.match());
      putCondition(n, "exempt", r.exempt());
      if (r.countOnly() != null) {
        putCondition(n, "countOnly", r.countOnly());
      }
      if (r.mode() != Mode.ENFORCE) {
        n.put("mode", r.mode().id());
      }
      return n;
    }
    n.put("limit", r.limit());
    boolean calendarWindow = r.calendar() == CalendarUnit.WEEK || r.calendar() == CalendarUnit.MONTH;
    n.put("window", calendarWindow ? r.calendar().id() : Durations.format(r.window()));
    var key = n.putArray("key");
    if (r.key().isEmpty()) {
      key.add(PolicyParser.TENANT_WIDE);
    }
    r.key().forEach(d -> key.add(d.toString()));
    putCondition(n, "match", r.match());
    putCondition(n, "exempt", r.exempt());
    if (r.algorithm() != Algorithm.SLIDING_LOG) {
      n.put("algorithm", r.algorithm().id());
    }
    if (r.algorithm() == Algorithm.SLIDING_COUNTER) {
      n.put("precision", r.precision());
    }
    if (r.mode() != Mode.ENFORCE) {
      n.put("mode", r.mode().id());
    }
    if (r.zone() != null) {
      n.put("zone", r.zone().getId());
    } else if (r.recipientZone()) {
      n.put("zone", PolicyParser.RECIPIENT_ZONE);
    }
    if (r.countOnly() != null) {
      putCondition(n, "countOnly", r.countOnly());
    }
    if (!r.headroom().isNone()) {
      ObjectNode h = n.putObject("headroom");
      for (Priority p : new Priority[] {Priority.HIGH, Priority.NORMAL, Priority.LOW}) {
        if (r.headroom().of(p) != 0) {
          h.put(p.id(), r.headroom().of(p));
        }
      }
    }
    return n;
  }

  private static void putCondition(ObjectNode n, String field, Condition c) {
    if (c.isEmpty()) {
      return;
    }
    ObjectNode m = n.putObject(field);
    c.values().forEach((d, v) -> {
      var a = m.putArray(d.toString());
      v.forEach(a::add);
    });
  }

  /** YAML text of policies, for rules files. */
  static String toYaml(List<Policy> policies) {
    try {
      return YAML.writeValueAsString(toTree(policies));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
