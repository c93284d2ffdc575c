package dev.fcap.policy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Condition;
import dev.fcap.model.Dimension;
import dev.fcap.model.Headroom;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Priority;
import dev.fcap.model.Rule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads policies from YAML or JSON trees and refuses invalid ones whole, with every error naming the
 * policy, the rule and the field. The same checks serve rule files and the admin API.
 *
 * <pre>
 * policies:
 *   - tenant: default
 *     rules:
 *       - id: recipient-per-minute
 *         limit: 15
 *         window: 1m
 *         key: [recipient]
 * </pre>
 */
public final class PolicyParser {
  public static final Duration MAX_WINDOW = Duration.ofDays(400);
  public static final long MAX_LIMIT = 1_000_000_000L;
  /**
   * The largest limit of a {@code sliding-log} rule: the log keeps one entry per message in its
   * window (16 bytes each on Redis, in block keys; see docs/algorithms.md), so 10^7 is up to 160 MB
   * per counter. Larger limits need an algorithm whose memory does not grow with the limit.
   */
  public static final long MAX_SLIDING_LOG_LIMIT = 10_000_000L;
  public static final int MAX_PRECISION = 10_000;
  public static final int MAX_RULES = 1_000;
  /**
   * {@code key: [tenant]}: one counter for the whole tenant (e.g. a tenant's total SMS per day). The
   * tenant is part of every key, so this is the key without further dimensions; an empty list is
   * refused, since it more likely means a forgotten key than a tenant-wide cap.
   */
  public static final String TENANT_WIDE = "tenant";
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,127}");
  private static final Set<String> RULE_FIELDS = Set.of(
      "id", "description", "limit", "window", "key", "match", "exempt", "algorithm", "precision", "mode", "zone",
      "sendWindow", "headroom", "countOnly");
  /** {@code zone: recipient}: a rule that reads the recipient's own zone. */
  public static final String RECIPIENT_ZONE = "recipient";
  /** A key given twice is refused, not taken from its last occurrence: a file means what it reads as. */
  private static final ObjectMapper YAML = new ObjectMapper(
      YAMLFactory.builder().enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION).build());

  private PolicyParser() {}

  /** Parses a rules file (YAML, or JSON, which is YAML too). */
  public static List<Policy> parseFile(Path file) throws IOException {
    return parse(Files.readString(file));
  }

  /** Parses the text of a rules file. */
  public static List<Policy> parse(String yaml) {
    JsonNode root;
    try {
      root = YAML.readTree(yaml);
    } catch (JsonProcessingException e) {
      throw new PolicyException(List.of(new PolicyError(null, null, null,
          "not valid YAML: " + e.getOriginalMessage() + locate(e))));
    }
    return parseTree(root);
  }

  private static String locate(JsonProcessingException e) {
    return e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ")";
  }

  /** Parses {@code {policies: [...]}}. */
  public static List<Policy> parseTree(JsonNode root) {
    List<PolicyError> errors = new ArrayList<>();
    if (root == null || !root.isObject()) {
      throw new PolicyException(List.of(new PolicyError(null, null, null, "expected a map with a 'policies' list")));
    }
    unknownFields(root, Set.of("policies"), null, null, "", errors);
    JsonNode list = root.get("policies");
    List<Policy> policies = new ArrayList<>();
    if (list == null || !list.isArray()) {
      errors.add(new PolicyError(null, null, "policies", "expected a list of policies"));
    } else {
      Set<String> tenants = new HashSet<>();
      for (JsonNode p : list) {
        Policy policy = policy(p, errors);
        if (policy != null && !tenants.add(policy.tenant())) {
          errors.add(new PolicyError(policy.tenant(), null, "tenant", "tenant appears more than once"));
        }
        policies.add(policy);
      }
    }
    if (!errors.isEmpty()) {
      throw new PolicyException(errors);
    }
    return policies;
  }

  /** Parses one policy object: {@code {tenant, version?, rules}}. */
  public static Policy parsePolicy(JsonNode node) {
    List<PolicyError> errors = new ArrayList<>();
    Policy p = policy(node, errors);
    if (!errors.isEmpty()) {
      throw new PolicyException(errors);
    }
    return p;
  }

  /** Parses a list of rules for {@code tenant}, as the admin API receives them. */
  public static List<Rule> parseRules(String tenant, JsonNode rules) {
    List<PolicyError> errors = new ArrayList<>();
    List<Rule> parsed = rules(tenant, rules, errors);
    if (!errors.isEmpty()) {
      throw new PolicyException(errors);
    }
    return parsed;
  }

  /** Parses a policy's {@code timeZone}, an IANA id; null (no node) is UTC. */
  public static ZoneId parseTimeZone(String tenant, JsonNode timeZone) {
    if (timeZone == null || timeZone.isNull()) {
      return null;
    }
    List<PolicyError> errors = new ArrayList<>();
    ZoneId zone = SendWindows.zone(timeZone, "timeZone", tenant, null, errors);
    if (!errors.isEmpty()) {
      throw new PolicyException(errors);
    }
    return zone;
  }

  /** Parses one rule of {@code tenant}. */
  public static Rule parseRule(String tenant, JsonNode rule) {
    List<PolicyError> errors = new ArrayList<>();
    Rule r = rule(tenant, rule, errors);
    if (!errors.isEmpty()) {
      throw new PolicyException(errors);
    }
    return r;
  }

  private static Policy policy(JsonNode p, List<PolicyError> errors) {
    if (!p.isObject()) {
      errors.add(new PolicyError(null, null, "policies", "each policy must be a map"));
      return null;
    }
    String tenant = text(p, "tenant", Message.DEFAULT_TENANT, null, null, errors);
    if (tenant != null && !ID.matcher(tenant).matches()) {
      errors.add(new PolicyError(tenant, null, "tenant", "tenant must be 1-128 of letters, digits, '.', '_', ':', '-'"));
    }
    unknownFields(p, Set.of("tenant", "version", "rules", "timeZone"), tenant, null, "", errors);
    ZoneId timeZone = null;
    if (p.hasNonNull("timeZone")) {
      timeZone = SendWindows.zone(p.get("timeZone"), "timeZone", tenant, null, errors);
    }
    long version = 0;
    if (p.has("version")) {
      if (!p.get("version").canConvertToExactIntegral() || p.get("version").asLong() < 0) {
        errors.add(new PolicyError(tenant, null, "version", "version must be a non-negative integer"));
      } else {
        version = p.get("version").asLong();
      }
    }
    List<Rule> rules = rules(tenant, p.get("rules"), errors);
    return new Policy(tenant == null ? "?" : tenant, version, rules, timeZone);
  }

  private static List<Rule> rules(String tenant, JsonNode list, List<PolicyError> errors) {
    List<Rule> rules = new ArrayList<>();
    if (list == null || list.isNull()) {
      return rules;
    }
    if (!list.isArray()) {
      errors.add(new PolicyError(tenant, null, "rules", "expected a list of rules"));
      return rules;
    }
    if (list.size() > MAX_RULES) {
      errors.add(new PolicyError(tenant, null, "rules", "at most " + MAX_RULES + " rules per policy"));
    }
    Set<String> ids = new HashSet<>();
    for (JsonNode r : list) {
      Rule rule = rule(tenant, r, errors);
      if (rule != null) {
        if (!ids.add(rule.id())) {
          errors.add(new PolicyError(tenant, rule.id(), "id", "duplicate rule id"));
        }
        rules.add(rule);
      }
    }
    return rules;
  }

  private static Rule rule(String tenant, JsonNode r, List<PolicyError> errors) {
    if (r == null || !r.isObject()) {
      errors.add(new PolicyError(tenant, null, "rules", "each rule must be a map"));
      return null;
    }
    int before = errors.size();
    String id = text(r, "id", null, tenant, null, errors);
    if (id != null && !ID.matcher(id).matches()) {
      errors.add(new PolicyError(tenant, id, "id", "id must be 1-128 of letters, digits, '.', '_', ':', '-'"));
    }
    unknownFields(r, RULE_FIELDS, tenant, id, "", errors);
    String description = text(r, "description", "", tenant, id, errors);
    if (r.has("sendWindow")) {
      return SendWindows.rule(r, id, description, tenant, errors, before);
    }
    long limit = limit(r, tenant, id, errors);
    CalendarUnit unit = CalendarWindows.calendarWindow(r);
    Duration window = unit != null ? unit.nominal() : window(r, tenant, id, errors);
    List<Dimension> key = key(r, tenant, id, errors);
    Condition match = condition(r, "match", tenant, id, errors);
    Condition exempt = condition(r, "exempt", tenant, id, errors);
    Algorithm algorithm = enumField(r, "algorithm", Algorithm.SLIDING_LOG, Algorithm::fromId, tenant, id, errors);
    Mode mode = enumField(r, "mode", Mode.ENFORCE, Mode::fromId, tenant, id, errors);
    if (algorithm == Algorithm.SLIDING_LOG && limit > MAX_SLIDING_LOG_LIMIT) {
      errors.add(new PolicyError(tenant, id, "limit", "a sliding-log rule keeps every message of its window, so its "
          + "limit is at most " + MAX_SLIDING_LOG_LIMIT + ", got " + limit + "; for larger limits use algorithm: "
          + "sliding-counter (memory independent of the limit, bounded error) or gcra"));
    }
    int precision = precision(r, algorithm, window, tenant, id, errors);
    CalendarWindows.Local local = CalendarWindows.local(r, unit, algorithm, window, tenant, id, errors);
    Headroom headroom = headroom(r, limit, tenant, id, errors);
    Condition countOnly = countOnly(r, tenant, id, errors);
    if (errors.size() > before) {
      return null;
    }
    return new Rule(id, description.isEmpty() ? null : description, limit, window, key, match, exempt, algorithm,
        precision, mode, local.zone(), local.recipientZone(), local.calendar(), null, headroom, countOnly);
  }

  /**
   * {@code headroom: {high: 2, normal: 5, low: 15}}: the units of the limit each class leaves for the
   * classes above it. Each value is an integer from 0 to the limit (the limit itself: the class is
   * never admitted), {@code critical} has none to give, and a lower class never leaves less than a
   * higher one (else a low message could take what a normal one may not).
   */
  private static Headroom headroom(JsonNode r, long limit, String tenant, String id, List<PolicyError> errors) {
    JsonNode n = r.get("headroom");
    if (n == null || n.isNull()) {
      return Headroom.NONE;
    }
    if (!n.isObject()) {
      errors.add(new PolicyError(tenant, id, "headroom", "headroom must be a map of priority to units, e.g. "
          + "{normal: 5, low: 15}"));
      return Headroom.NONE;
    }
    long[] values = new long[3]; // high, normal, low
    List<Priority> classes = List.of(Priority.HIGH, Priority.NORMAL, Priority.LOW);
    int before = errors.size();
    for (var it = n.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      JsonNode v = n.get(name);
      int at = Priority.fromId(name).map(classes::indexOf).orElse(-1);
      if (at < 0) {
        errors.add(new PolicyError(tenant, id, "headroom." + name, name.equals("critical")
            ? "critical is the highest class: no class is above it to keep headroom for"
            : "unknown priority '" + name + "'; one of high, normal, low"));
      } else if (!v.isIntegralNumber() || v.asLong() < 0 || v.asLong() > limit) {
        errors.add(new PolicyError(tenant, id, "headroom." + name, "headroom must be an integer from 0 to the limit ("
            + limit + "), got " + v));
      } else {
        values[at] = v.asLong();
      }
    }
    if (errors.size() == before && (values[1] < values[0] || values[2] < values[1])) {
      errors.add(new PolicyError(tenant, id, "headroom", "a lower priority must keep at least the headroom of a "
          + "higher one (high <= normal <= low), got high " + values[0] + ", normal " + values[1] + ", low "
          + values[2]));
    }
    return new Headroom(values[0], values[1], values[2]);
  }

  private static long limit(JsonNode r, String tenant, String id, List<PolicyError> errors) {
    JsonNode n = r.get("limit");
    if (n == null) {
      errors.add(new PolicyError(tenant, id, "limit", "limit is required"));
      return 0;
    }
    if (!n.isIntegralNumber() || n.asLong() < 1 || n.asLong() > MAX_LIMIT) {
      errors.add(new PolicyError(tenant, id, "limit", "limit must be an integer from 1 to " + MAX_LIMIT + ", got " + n));
      return 0;
    }
    return n.asLong();
  }

  private static Duration window(JsonNode r, String tenant, String id, List<PolicyError> errors) {
    String text = text(r, "window", null, tenant, id, errors);
    if (text == null) {
      return null;
    }
    Duration d = Durations.parse(text).orElse(null);
    if (d == null) {
      errors.add(new PolicyError(tenant, id, "window",
          "window '" + text + "' does not parse; write e.g. 59s, 1m, 24h, 1h30m, 500ms, 7d"));
    } else if (d.isZero()) {
      errors.add(new PolicyError(tenant, id, "window", "window must be longer than zero"));
      d = null;
    } else if (d.compareTo(MAX_WINDOW) > 0) {
      errors.add(new PolicyError(tenant, id, "window", "window must be at most 400 days, got " + text));
      d = null;
    }
    return d;
  }

  private static List<Dimension> key(JsonNode r, String tenant, String id, List<PolicyError> errors) {
    JsonNode n = r.get("key");
    if (n == null) {
      errors.add(new PolicyError(tenant, id, "key", "key is required, e.g. [recipient] or [recipient, content]"));
      return List.of();
    }
    if (!n.isArray()) {
      errors.add(new PolicyError(tenant, id, "key", "key must be a list of dimensions"));
      return List.of();
    }
    if (n.isEmpty()) {
      errors.add(new PolicyError(tenant, id, "key", "key must name at least one dimension; for one counter per "
          + "tenant write key: [" + TENANT_WIDE + "]"));
      return List.of();
    }
    if (n.size() == 1 && TENANT_WIDE.equals(n.get(0).asText())) {
      return List.of(); // the tenant is part of every key: with nothing else, one counter per tenant
    }
    Set<Dimension> dims = new LinkedHashSet<>();
    for (JsonNode d : n) {
      Dimension dim = d.isTextual() ? Dimension.parse(d.asText()).orElse(null) : null;
      if (d.isTextual() && TENANT_WIDE.equals(d.asText())) {
        errors.add(new PolicyError(tenant, id, "key", "the tenant is part of every key; write [" + TENANT_WIDE
            + "] alone for one counter per tenant, or leave it out"));
      } else if (dim != null && dim.attribute() != null && blank(dim.attribute())) {
        errors.add(new PolicyError(tenant, id, "key", "attribute name in " + d + " must not be blank"));
      } else if (dim == null) {
        errors.add(new PolicyError(tenant, id, "key", "unknown dimension " + d
            + "; use recipient, content, channel, sender, category, attr:NAME, or [tenant] alone"));
      } else if (!dims.add(dim)) {
        errors.add(new PolicyError(tenant, id, "key", "dimension " + dim + " appears twice"));
      }
    }
    return List.copyOf(dims);
  }

  /**
   * {@code countOnly:} (the form of {@code match}): the messages a rule never refuses but still counts;
   * null when absent. An empty one would name every message: that is {@code mode: shadow}, said so.
   */
  static Condition countOnly(JsonNode r, String tenant, String id, List<PolicyError> errors) {
    if (r.get("countOnly") == null || r.get("countOnly").isNull()) {
      return null;
    }
    Condition c = condition(r, "countOnly", tenant, id, errors);
    if (c.isEmpty() && r.get("countOnly").isObject()) {
      errors.add(new PolicyError(tenant, id, "countOnly", "countOnly names the messages the rule counts without "
          + "refusing, e.g. {category: [transactional]}; for every message use mode: shadow"));
    }
    return c;
  }

  static Condition condition(JsonNode r, String field, String tenant, String id, List<PolicyError> errors) {
    JsonNode n = r.get(field);
    if (n == null || n.isNull()) {
      return Condition.ANY;
    }
    if (!n.isObject()) {
      errors.add(new PolicyError(tenant, id, field, field + " must be a map of dimension to values"));
      return Condition.ANY;
    }
    Map<Dimension, Set<String>> values = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String f = field + "." + e.getKey();
      Dimension dim = Dimension.parse(e.getKey()).orElse(null);
      if (dim == null || !dim.selectable()) {
        errors.add(new PolicyError(tenant, id, f, "cannot select on '" + e.getKey()
            + "'; use channel, sender, category or attr:NAME"));
        continue;
      }
      Set<String> set = new LinkedHashSet<>();
      JsonNode v = e.getValue();
      if (v.isTextual() && !blank(v.asText())) {
        set.add(v.asText());
      } else if (v.isArray() && v.size() > 0) {
        for (JsonNode x : v) {
          if (!x.isValueNode() || x.isNull()) {
            errors.add(new PolicyError(tenant, id, f, "values must be strings"));
          } else if (blank(x.asText())) {
            errors.add(new PolicyError(tenant, id, f, "values must not be empty or blank"));
          } else {
            set.add(x.asText());
          }
        }
      } else {
        errors.add(new PolicyError(tenant, id, f, "expected a value or a non-empty list of values"));
      }
      values.put(dim, set);
    }
    return new Condition(values);
  }

  private static int precision(JsonNode r, Algorithm algorithm, Duration window, String tenant, String id,
      List<PolicyError> errors) {
    JsonNode n = r.get("precision");
    if (n == null) {
      return 0;
    }
    if (algorithm != Algorithm.SLIDING_COUNTER) {
      errors.add(new PolicyError(tenant, id, "precision", "precision applies to sliding-counter rules only"));
      return 0;
    }
    if (!n.isIntegralNumber() || n.asInt() < 1 || n.asInt() > MAX_PRECISION) {
      errors.add(new PolicyError(tenant, id, "precision", "precision must be an integer from 1 to " + MAX_PRECISION));
      return 0;
    }
    return n.asInt();
  }

  static <T> T enumField(JsonNode r, String field, T fallback,
      java.util.function.Function<String, java.util.Optional<T>> parse, String tenant, String id,
      List<PolicyError> errors) {
    JsonNode n = r.get(field);
    if (n == null) {
      return fallback;
    }
    T value = n.isTextual() ? parse.apply(n.asText()).orElse(null) : null;
    if (value == null) {
      String allowed = field.equals("mode") ? "enforce, shadow" : "sliding-log, sliding-counter, fixed-window, gcra";
      errors.add(new PolicyError(tenant, id, field, "unknown " + field + " " + n + "; use one of " + allowed));
      return fallback;
    }
    return value;
  }

  private static String text(JsonNode node, String field, String fallback, String tenant, String id,
      List<PolicyError> errors) {
    JsonNode n = node.get(field);
    if (n == null || n.isNull()) {
      if (fallback == null) {
        errors.add(new PolicyError(tenant, id, field, field + " is required"));
      }
      return fallback;
    }
    if (!n.isTextual() && !n.isNumber()) {
      errors.add(new PolicyError(tenant, id, field, field + " must be a string"));
      return fallback;
    }
    return n.asText();
  }

  /** Empty or only white space, the non-breaking kinds included. */
  private static boolean blank(String s) {
    return s.codePoints().allMatch(c -> Character.isWhitespace(c) || Character.isSpaceChar(c));
  }

  static void unknownFields(JsonNode node, Set<String> known, String tenant, String id, String prefix,
      List<PolicyError> errors) {
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!known.contains(name)) {
        errors.add(new PolicyError(tenant, id, prefix + name, "unknown field '" + name + "'"));
      }
    }
  }

  /** The tree form of policies, as {@link #parseTree} reads it back. */
  public static ObjectNode toTree(List<Policy> policies) {
    return PolicyWriter.toTree(policies);
  }

  /** One policy as a tree. */
  public static ObjectNode toTree(Policy p) {
    return PolicyWriter.toTree(p);
  }

  /** One rule as a tree; defaults are left out. */
  public static ObjectNode toTree(Rule r) {
    return PolicyWriter.toTree(r);
  }

  /** YAML text of policies, for rules files. */
  public static String toYaml(List<Policy> policies) {
    return PolicyWriter.toYaml(policies);
  }
}
