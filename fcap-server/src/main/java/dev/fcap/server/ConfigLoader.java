package dev.fcap.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.fcap.policy.Durations;
import dev.fcap.server.auth.ApiKey;
import dev.fcap.server.auth.Role;
import dev.fcap.server.failure.FailureAction;
import dev.fcap.server.failure.FailurePolicy;
import dev.fcap.server.guard.InputLimits;
import dev.fcap.server.guard.Safeguards;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a {@link ServerConfig}: built-in defaults, then {@code fcap.yaml}, then environment variables,
 * then command-line overrides. Every setting has one dotted key (e.g. {@code store.timeout}) and one
 * environment variable ({@code FCAP_STORE_TIMEOUT}: {@code FCAP_} plus the key in upper snake case).
 * List and map settings ({@code apiKeys}, {@code failure.categories}) take YAML flow text in the
 * environment, e.g. {@code FCAP_FAILURE_CATEGORIES='{marketing: deny}'}. Unknown keys and bad values
 * are refused with the key and where it came from, so a typo never silently falls back to a default.
 */
public final class ConfigLoader {
  /** A key given twice is refused, not taken from its last occurrence: a file means what it reads as. */
  private static final ObjectMapper YAML = new ObjectMapper(
      YAMLFactory.builder().enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION).build());

  /** Every setting: key, default (YAML text). The order is the order of the docs. */
  static final Map<String, String> SETTINGS = new LinkedHashMap<>();

  static {
    SETTINGS.put("listen", "127.0.0.1:8080");
    SETTINGS.put("dataDir", "data");
    SETTINGS.put("store.uri", "memory");
    SETTINGS.put("store.timeout", "500ms");
    SETTINGS.put("store.callSize", "500");
    SETTINGS.put("store.maxBytes", "0");
    SETTINGS.put("store.fsync", "1s");
    SETTINGS.put("store.dir", "''");
    SETTINGS.put("rules.source", "data/rules.yaml");
    SETTINGS.put("rules.seed", "builtin");
    SETTINGS.put("rules.history", "1000");
    SETTINGS.put("apiKeys", "[]");
    SETTINGS.put("audit.sink", "file:data/audit.jsonl");
    SETTINGS.put("audit.sampleAdmissions", "0.01");
    SETTINGS.put("audit.queue", "65536");
    SETTINGS.put("audit.maxFileBytes", "100MB");
    SETTINGS.put("audit.maxFiles", "5");
    SETTINGS.put("audit.recentDenials", "20");
    SETTINGS.put("audit.recentRecipients", "100000");
    SETTINGS.put("failure.default", "local");
    SETTINGS.put("failure.categories", "{transactional: allow}");
    SETTINGS.put("failure.full", "local");
    SETTINGS.put("failure.probeInterval", "1s");
    SETTINGS.put("failure.window", "1s");
    SETTINGS.put("failure.journal", "1000000");
    SETTINGS.put("failure.storeReset", "decide");
    SETTINGS.put("limits.maxBodyBytes", "8MB");
    SETTINGS.put("limits.maxBatch", "10000");
    SETTINGS.put("limits.maxAttributes", "64");
    SETTINGS.put("limits.maxAttributeNameLength", "128");
    SETTINGS.put("limits.maxValueLength", "1024");
    SETTINGS.put("limits.maxJsonDepth", "16");
    SETTINGS.put("limits.maxRulesPerPolicy", "1000");
    SETTINGS.put("http.allowedHosts", "[]");
    SETTINGS.put("http.allowedOrigins", "[]");
    SETTINGS.put("http.requestTimeout", "10s");
    SETTINGS.put("metrics.maxTenants", "100");
    SETTINGS.put("metrics.maxRulesPerTenant", "200");
    SETTINGS.put("rules.settle", "500ms");
    SETTINGS.put("shutdown.grace", "10s");
    SETTINGS.put("release.horizon", "policy");
  }

  private static final Set<String> STRUCTURED = Set.of("apiKeys", "failure.categories", "http.allowedHosts",
      "http.allowedOrigins");

  private ConfigLoader() {}

  /** The environment variable of a key: {@code store.maxBytes} is {@code FCAP_STORE_MAX_BYTES}. */
  public static String envName(String key) {
    return "FCAP_" + key.replace('.', '_').replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
  }

  /** Every setting key with its default, for docs and {@code fcap serve --help}. */
  public static Map<String, String> settings() {
    return Map.copyOf(SETTINGS);
  }

  /**
   * The defaults: loopback:8080, embedded store, data/rules.yaml seeded from examples/rules.yaml. Here,
   * not on {@link ServerConfig}: the record is plain data and knows no loader.
   */
  public static ServerConfig defaults() {
    return load(null, Map.of(), Map.of());
  }

  /**
   * Loads the config.
   *
   * @param configFile {@code fcap.yaml}, or null for none
   * @param env the environment ({@code System.getenv()}); only {@code FCAP_*} settings are read
   * @param overrides setting key to value, from command-line flags
   */
  public static ServerConfig load(Path configFile, Map<String, String> env, Map<String, String> overrides) {
    Map<String, JsonNode> values = new HashMap<>();
    Map<String, String> origin = new HashMap<>();
    for (Map.Entry<String, String> e : SETTINGS.entrySet()) {
      values.put(e.getKey(), parseYaml(e.getValue(), "default of " + e.getKey()));
      origin.put(e.getKey(), "default");
    }
    if (configFile != null) {
      readFile(configFile, values, origin);
    }
    refuseUnknownVariables(env);
    for (String key : SETTINGS.keySet()) {
      String v = env.get(envName(key));
      if (v != null) {
        values.put(key, STRUCTURED.contains(key) ? parseYaml(v, envName(key)) : TextNode.valueOf(v));
        origin.put(key, "environment variable " + envName(key));
      }
    }
    for (Map.Entry<String, String> e : overrides.entrySet()) {
      if (!SETTINGS.containsKey(e.getKey())) {
        throw new ConfigException("unknown setting '" + e.getKey() + "'");
      }
      values.put(e.getKey(), STRUCTURED.contains(e.getKey()) ? parseYaml(e.getValue(), e.getKey())
          : TextNode.valueOf(e.getValue()));
      origin.put(e.getKey(), "command line");
    }
    placeInDataDir(values, origin);
    return new Reader(values, origin).config();
  }

  /**
   * {@code FCAP_} variables that are not settings: the config file's path, the launcher's JVM
   * options, the API key {@code fcap bench} and the clients send, and the benchmark scripts' switch.
   */
  static final Set<String> OTHER_VARIABLES = Set.of("FCAP_CONFIG", "FCAP_JAVA_OPTS", "FCAP_API_KEY",
      "FCAP_BENCH_PREBUILT");

  /** A misspelled variable would leave its setting at the default without a word: it stops the start. */
  private static void refuseUnknownVariables(Map<String, String> env) {
    Set<String> known = new LinkedHashSet<>(OTHER_VARIABLES);
    SETTINGS.keySet().forEach(k -> known.add(envName(k)));
    List<String> unknown = env.keySet().stream().filter(v -> v.startsWith("FCAP_") && !known.contains(v)).sorted()
        .toList();
    if (unknown.isEmpty()) {
      return;
    }
    String name = unknown.get(0);
    String closest = Closest.of(name, known);
    throw new ConfigException("environment variable " + name + " names no setting"
        + (closest == null ? "." : "; did you mean " + closest + (OTHER_VARIABLES.contains(closest) ? "" : " ("
            + SETTINGS.keySet().stream().filter(k -> envName(k).equals(closest)).findFirst().orElseThrow() + ")")
            + "?")
        + (unknown.size() > 1 ? " Also unknown: " + String.join(", ", unknown.subList(1, unknown.size())) + "." : "")
        + " Every setting and its variable: docs/server.md, Configuration");
  }

  /**
   * The rules file and the audit file default to files in {@code dataDir} (and the embedded store's
   * state to {@code dataDir/state}, beside the rules file), so one setting moves every file a server
   * writes; a value set explicitly stays as given.
   */
  private static void placeInDataDir(Map<String, JsonNode> values, Map<String, String> origin) {
    JsonNode dir = values.get("dataDir");
    if (!dir.isValueNode() || dir.asText().isBlank()) {
      throw new ConfigException(origin.get("dataDir") + ": dataDir: expected a directory path, got '"
          + (dir.isValueNode() ? dir.asText() : dir.toString()) + "'");
    }
    Path dataDir = Path.of(dir.asText().trim());
    if (origin.get("rules.source").equals("default")) {
      values.put("rules.source", TextNode.valueOf(dataDir.resolve("rules.yaml").toString()));
    }
    if (origin.get("audit.sink").equals("default")) {
      values.put("audit.sink", TextNode.valueOf("file:" + dataDir.resolve("audit.jsonl")));
    }
  }

  private static void readFile(Path file, Map<String, JsonNode> values, Map<String, String> origin) {
    JsonNode root;
    try {
      root = YAML.readTree(Files.readString(file));
    } catch (JsonProcessingException e) {
      throw new ConfigException(file + ": not valid YAML: " + e.getOriginalMessage());
    } catch (IOException e) {
      String why = e instanceof java.nio.file.NoSuchFileException ? "it does not exist"
          : e instanceof java.nio.file.AccessDeniedException ? "permission denied"
          : e instanceof java.nio.charset.CharacterCodingException ? "it is not UTF-8 text" : e.getMessage();
      throw new ConfigException("cannot read config file " + file + ": " + why);
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      return;
    }
    if (!root.isObject()) {
      throw new ConfigException(file + ": expected a map of settings");
    }
    flatten(file, "", root, values, origin);
  }

  private static void flatten(Path file, String prefix, JsonNode node, Map<String, JsonNode> values,
      Map<String, String> origin) {
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String key = prefix + e.getKey();
      if (SETTINGS.containsKey(key)) {
        values.put(key, e.getValue());
        origin.put(key, file + " (" + key + ")");
      } else if (e.getValue().isObject() && SETTINGS.keySet().stream().anyMatch(k -> k.startsWith(key + "."))) {
        flatten(file, key + ".", e.getValue(), values, origin);
      } else {
        String closest = Closest.of(key, SETTINGS.keySet());
        throw new ConfigException(file + ": unknown setting '" + key + "'"
            + (closest == null ? "" : "; did you mean " + closest + "?") + " Known settings: "
            + String.join(", ", SETTINGS.keySet()));
      }
    }
  }

  private static JsonNode parseYaml(String text, String where) {
    try {
      JsonNode n = YAML.readTree(text);
      return n == null ? TextNode.valueOf("") : n;
    } catch (JsonProcessingException e) {
      throw new ConfigException(where + ": not valid YAML: " + e.getOriginalMessage());
    }
  }

  /** Converts the raw values, naming the key and its origin in every error. */
  private static final class Reader {
    private static final Pattern BYTES = Pattern.compile("(\\d+)\\s*([kmg]?i?b?)?", Pattern.CASE_INSENSITIVE);
    private final Map<String, JsonNode> values;
    private final Map<String, String> origin;

    Reader(Map<String, JsonNode> values, Map<String, String> origin) {
      this.values = values;
      this.origin = origin;
    }

    ServerConfig config() {
      String listen = text("listen");
      int colon = listen.lastIndexOf(':');
      if (colon <= 0) {
        throw error("listen", "expected HOST:PORT, e.g. 127.0.0.1:8080, got '" + listen + "'");
      }
      String host = listen.substring(0, colon);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      int port = intRange("listen", listen.substring(colon + 1), 0, 65535);
      FailurePolicy failure = new FailurePolicy(duration("store.timeout"), action("failure.default",
          text("failure.default")), categories(), duration("failure.probeInterval"), duration("failure.window"),
          intRange("store.callSize", text("store.callSize"), 1, 100_000),
          intRange("failure.journal", text("failure.journal"), 0, 100_000_000), whenFull(), onReset());
      return new ServerConfig(host, port, text("store.uri"), bytes("store.maxBytes"), durability(), text("rules.source"),
          text("rules.seed"), intRange("rules.history", text("rules.history"), 1, 1_000_000), apiKeys(),
          auditSink(), ratio("audit.sampleAdmissions"), intRange("audit.queue", text("audit.queue"), 1, 10_000_000),
          bytes("audit.maxFileBytes"), intRange("audit.maxFiles", text("audit.maxFiles"), 1, 1000),
          intRange("audit.recentDenials", text("audit.recentDenials"), 0, 1000),
          intRange("audit.recentRecipients", text("audit.recentRecipients"), 1, 100_000_000), recentDenialsFile(),
          failure,
          bytes("limits.maxBodyBytes"), intRange("limits.maxBatch", text("limits.maxBatch"), 1, 1_000_000),
          duration("shutdown.grace"), safeguards(), releaseHorizon());
    }

    /**
     * {@code release.horizon}: how long admitted decisions stay releasable by decision id; {@code policy}
     * (the policy's longest window, at most 7 days), a duration up to 7 days, or 0 (off). Null for policy.
     */
    private Duration releaseHorizon() {
      String t = text("release.horizon");
      if (t.equals("policy")) {
        return null;
      }
      if (t.equals("0")) {
        return Duration.ZERO;
      }
      Duration d = Durations.parse(t).orElse(null);
      if (d == null || d.isNegative() || d.compareTo(Duration.ofDays(7)) > 0) {
        throw error("release.horizon", "expected policy, 0 (off) or a duration up to 7d, e.g. 24h, got '" + t + "'");
      }
      return d;
    }

    private Safeguards safeguards() {
      InputLimits limits = new InputLimits(
          intRange("limits.maxAttributes", text("limits.maxAttributes"), 0, 100_000),
          intRange("limits.maxAttributeNameLength", text("limits.maxAttributeNameLength"), 1,
              dev.fcap.model.Message.MAX_ID_LENGTH),
          intRange("limits.maxValueLength", text("limits.maxValueLength"), 1, dev.fcap.model.Message.MAX_ID_LENGTH),
          intRange("limits.maxJsonDepth", text("limits.maxJsonDepth"), 4, 1000),
          intRange("limits.maxRulesPerPolicy", text("limits.maxRulesPerPolicy"), 1,
              dev.fcap.policy.PolicyParser.MAX_RULES));
      return new Safeguards(list("http.allowedHosts"), list("http.allowedOrigins"), duration("http.requestTimeout"),
          limits, intRange("metrics.maxTenants", text("metrics.maxTenants"), 1, 1_000_000),
          intRange("metrics.maxRulesPerTenant", text("metrics.maxRulesPerTenant"), 1, 1_000_000),
          duration("rules.settle"));
    }

    private List<String> list(String key) {
      JsonNode n = values.get(key);
      List<String> out = new ArrayList<>();
      if (n.isNull() || (n.isTextual() && n.asText().isBlank())) {
        return out;
      }
      if (n.isTextual()) {
        out.add(n.asText().trim());
      } else if (n.isArray()) {
        for (JsonNode x : n) {
          if (!x.isTextual() || x.asText().isBlank()) {
            throw error(key, "expected a list of names, got " + x);
          }
          out.add(x.asText().trim());
        }
      } else {
        throw error(key, "expected a list of names");
      }
      return out;
    }

    /**
     * The embedded store's durability: {@code store.fsync} is {@code always}, an interval or
     * {@code off}; the state lives in {@code store.dir}, by default {@code state/} beside the rules
     * file (so {@code DATADIR/state} with the default rules file), or in {@code DATADIR/state} when
     * the rules live in Redis.
     */
    private dev.fcap.store.memory.Durability durability() {
      String fsync = text("store.fsync");
      if (fsync.equals("off")) {
        return null;
      }
      Duration every = fsync.equals("always") ? Duration.ZERO : Durations.parse(fsync)
          .filter(d -> !d.isNegative() && !d.isZero())
          .orElseThrow(() -> error("store.fsync", "expected always, an interval like 1s or 200ms, or off, got '"
              + fsync + "'"));
      String dir = text("store.dir");
      if (dir.isEmpty()) {
        String rules = text("rules.source");
        if (rules.matches("[a-z][a-z0-9+.-]*://.*")) {
          dir = Path.of(text("dataDir")).resolve("state").toString();
        } else {
          Path file = Path.of(rules.startsWith("file:") ? rules.substring(5) : rules);
          dir = (file.getParent() == null ? Path.of("state") : file.getParent().resolve("state")).toString();
        }
      }
      return new dev.fcap.store.memory.Durability(Path.of(dir), every);
    }

    /**
     * {@code recent-denials.json} where the server's other state lives: beside the rules file (so in
     * {@code DATADIR} with the default rules file), or in {@code DATADIR} when the rules live in Redis.
     */
    private Path recentDenialsFile() {
      String rules = text("rules.source");
      if (rules.matches("[a-z][a-z0-9+.-]*://.*")) {
        return Path.of(text("dataDir")).resolve("recent-denials.json");
      }
      Path file = Path.of(rules.startsWith("file:") ? rules.substring(5) : rules);
      return file.resolveSibling("recent-denials.json");
    }

    private ConfigException error(String key, String message) {
      return new ConfigException(origin.get(key) + ": " + key + ": " + message);
    }

    private String text(String key) {
      JsonNode n = values.get(key);
      if (!n.isValueNode() || n.isNull()) {
        throw error(key, "expected a single value");
      }
      return n.asText().trim();
    }

    private int intRange(String key, String text, int min, int max) {
      try {
        int v = Integer.parseInt(text.trim());
        if (v < min || v > max) {
          throw error(key, "must be from " + min + " to " + max + ", got " + v);
        }
        return v;
      } catch (NumberFormatException e) {
        throw error(key, "expected an integer, got '" + text + "'");
      }
    }

    private Duration duration(String key) {
      String t = text(key);
      Duration d = Durations.parse(t).orElseThrow(() -> error(key, "expected a duration like 100ms, 2s, 1m, got '"
          + t + "'"));
      if (d.isZero() || d.isNegative()) {
        throw error(key, "must be longer than zero");
      }
      return d;
    }

    private long bytes(String key) {
      String t = text(key);
      Matcher m = BYTES.matcher(t);
      if (!m.matches()) {
        throw error(key, "expected a size like 100MB, 64KB or a number of bytes, got '" + t + "'");
      }
      long n = Long.parseLong(m.group(1));
      String unit = m.group(2) == null ? "" : m.group(2).toLowerCase(Locale.ROOT);
      long factor = unit.startsWith("k") ? 1L << 10 : unit.startsWith("m") ? 1L << 20 : unit.startsWith("g") ? 1L << 30 : 1;
      return n * factor;
    }

    private double ratio(String key) {
      String t = text(key);
      try {
        double v = Double.parseDouble(t);
        if (!(v >= 0 && v <= 1)) {
          throw error(key, "must be from 0 to 1 (the share of admissions written to the audit), got " + t);
        }
        return v;
      } catch (NumberFormatException e) {
        throw error(key, "expected a number from 0 to 1, got '" + t + "'");
      }
    }

    private String auditSink() {
      String t = text("audit.sink");
      if (!t.equals("none") && !(t.startsWith("file:") && t.length() > 5) && !t.matches("[a-z][a-z0-9+.-]*://.+")) {
        throw error("audit.sink", "expected 'none', 'file:PATH' or a sink URI, got '" + t + "'");
      }
      return t;
    }

    private FailureAction action(String key, String text) {
      return FailureAction.fromId(text).orElseThrow(() -> error(key, "expected local, allow or deny, got '" + text + "'"));
    }

    /** {@code failure.full}: one action for every category, or {@code policy} (null) for each category's own. */
    private FailureAction whenFull() {
      String t = text("failure.full");
      if (t.equals("policy")) {
        return null;
      }
      return FailureAction.fromId(t).orElseThrow(() -> error("failure.full", "expected local, allow, deny or policy, "
          + "got '" + t + "'"));
    }

    /** {@code failure.storeReset}: decide as usual on a store that lost its data, or by the failure policy. */
    private FailurePolicy.OnReset onReset() {
      String t = text("failure.storeReset");
      return FailurePolicy.OnReset.fromId(t).orElseThrow(() -> error("failure.storeReset",
          "expected decide (as usual, counting from zero) or policy (the failure policy until the longest window "
              + "has passed), got '" + t + "'"));
    }

    private Map<String, FailureAction> categories() {
      JsonNode n = values.get("failure.categories");
      if (n.isNull() || (n.isTextual() && n.asText().isEmpty())) {
        return Map.of();
      }
      if (!n.isObject()) {
        throw error("failure.categories", "expected a map of category to local, allow or deny");
      }
      Map<String, FailureAction> out = new HashMap<>();
      n.fields().forEachRemaining(e -> out.put(e.getKey(), action("failure.categories." + e.getKey(),
          e.getValue().asText())));
      return out;
    }

    private List<ApiKey> apiKeys() {
      JsonNode n = values.get("apiKeys");
      if (n.isNull() || (n.isTextual() && n.asText().isEmpty())) {
        return List.of();
      }
      if (!n.isArray()) {
        throw error("apiKeys", "expected a list of {name, sha256, tenants, roles}");
      }
      List<ApiKey> keys = new ArrayList<>();
      Set<String> names = new LinkedHashSet<>();
      for (JsonNode k : n) {
        keys.add(apiKey(k));
        if (!names.add(keys.get(keys.size() - 1).name())) {
          throw error("apiKeys", "two keys are named '" + keys.get(keys.size() - 1).name() + "'");
        }
      }
      return keys;
    }

    private ApiKey apiKey(JsonNode k) {
      if (!k.isObject()) {
        throw error("apiKeys", "each key must be a map {name, sha256, tenants, roles}");
      }
      k.fieldNames().forEachRemaining(f -> {
        if (!Set.of("name", "sha256", "tenants", "roles").contains(f)) {
          throw error("apiKeys", "unknown field '" + f + "' (known: name, sha256, tenants, roles)");
        }
      });
      String name = k.path("name").asText("");
      if (name.isEmpty()) {
        throw error("apiKeys", "every key needs a name");
      }
      String hash = k.path("sha256").asText("");
      if (!hash.matches("[0-9a-fA-F]{64}")) {
        throw error("apiKeys", "key '" + name + "': sha256 must be the 64 hex digits of the secret's SHA-256 "
            + "(e.g. printf %s SECRET | sha256sum)");
      }
      Set<String> tenants = strings(k.get("tenants"), name, "tenants");
      Set<Role> roles = new LinkedHashSet<>();
      for (String r : strings(k.get("roles"), name, "roles")) {
        roles.add(Role.fromId(r).orElseThrow(() -> error("apiKeys", "key '" + name + "': unknown role '" + r
            + "'; use decide, read, admin, suppress")));
      }
      return ApiKey.of(name, hash, tenants, roles);
    }

    private Set<String> strings(JsonNode n, String name, String field) {
      Set<String> out = new LinkedHashSet<>();
      if (n != null && n.isTextual()) {
        out.add(n.asText());
      } else if (n != null && n.isArray()) {
        n.forEach(x -> out.add(x.asText()));
      }
      if (out.isEmpty()) {
        throw error("apiKeys", "key '" + name + "': " + field + " must be a non-empty list");
      }
      return out;
    }
  }

  /** A setting is unknown or has a bad value; the message names the setting and its source. */
  public static final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
      super(message);
    }
  }
}
