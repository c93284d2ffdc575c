package dev.fcap.server.metrics;

import dev.fcap.model.Decision;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The server's Prometheus metrics. Meters are looked up once per (tenant, rule, outcome) and cached,
 * so recording a decision costs a map hit and an add per rule, not a registry lookup.
 *
 * <p><b>Bounded labels.</b> Tenants and rule ids come from callers, so their label values are bounded:
 * the first {@code maxTenants} tenants (and, per tenant, the first {@code maxRulesPerTenant} rules) get
 * their own series, later ones count under {@code _other} ({@code metrics.maxTenants},
 * {@code metrics.maxRulesPerTenant}). 50,000 tenants make 100 tenants' series plus one, not 100,000.
 *
 * <p><b>Scoped scrapes.</b> {@link #scrape(Predicate)} keeps only the series labelled with a tenant
 * the caller may use: a key of tenant A sees nothing of tenant B, not even that it exists, nor the
 * server-wide series (store latency, audit volume) that sum over every tenant.
 *
 * <ul>
 *   <li>{@code fcap_decisions_total{tenant,outcome}}: allowed or denied decisions (dry runs excluded)
 *   <li>{@code fcap_deferred_decisions_total{tenant}}: denied decisions booked for later instead ({@code deferred})
 *   <li>{@code fcap_deferred_ahead_seconds{tenant}}: how far ahead a deferred decision booked its message
 *       ({@code sendAt - time}; histogram of {@link #DEFERRED_BUCKETS})
 *   <li>{@code fcap_rule_decisions_total{tenant,rule,outcome}}: per rule: allowed, blocked, shadow_blocked
 *   <li>{@code fcap_rule_near_limit_total{tenant,rule}}: decisions the rule saw with less than 10 % of its
 *       limit remaining (before the message): the early warning that a cap is about to bite
 *   <li>{@code fcap_rule_limit{tenant,rule,mode}}: the configured limit of every rule in force
 *   <li>{@code fcap_degraded_decisions_total{tenant,action}}: decided by the failure policy
 *   <li>{@code fcap_decision_seconds{op}}: latency of decide, check and batch (histogram)
 *   <li>{@code fcap_store_seconds{op}}, {@code fcap_store_errors_total{reason}}: see {@link MeteredStore}
 *   <li>{@code fcap_http_refused_total{reason}}: requests refused before anything is decided (Host, Origin,
 *       content type, request timeout: {@code RequestGuard}; body shape: as the handler reads the body)
 *   <li>{@code fcap_auth_failures_total{reason}}: requests with a missing, malformed or unknown API key
 *   <li>{@code fcap_audit_dropped_total}, {@code fcap_policy_version{tenant}}, {@code fcap_store_partitions},
 *       {@code fcap_store_bytes}, {@code fcap_store_max_bytes}, {@code fcap_store_full}, {@code fcap_store_up}
 * </ul>
 *
 * <p>Every meter carries HELP text ({@link #HELP} for the counters), so {@code promtool check metrics}
 * is clean on a real scrape (OpsFilesIT).
 */
public final class ServerMetrics {
  public static final int DEFAULT_MAX_TENANTS = 100;
  public static final int DEFAULT_MAX_RULES_PER_TENANT = 200;
  static final String OVERFLOW = "_other";
  private static final Pattern TENANT_LABEL = Pattern.compile("[{,]tenant=\"([^\"]*)\"");
  private final int maxTenants;
  private final int maxRulesPerTenant;
  private volatile TenantMeters overflow;
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Map<String, TenantMeters> tenants = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> policyVersions = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> suppressionEntries = new ConcurrentHashMap<>();
  private final Map<String, Timer> timers = new ConcurrentHashMap<>();
  private final MultiGauge ruleLimits = MultiGauge.builder("fcap_rule_limit")
      .description("configured limit of each rule in force, in cost units").register(registry);
  private volatile Supplier<? extends Collection<Policy>> policies = List::of;

  /** HELP text of the counters made by {@link #counter}, by meter name: a counter missing here fails when first used. */
  private static final Map<String, String> HELP = Map.of(
      "fcap_decisions_total", "decisions by outcome (dry runs excluded)",
      "fcap_rule_decisions_total", "decisions per rule that applied, by the rule's outcome",
      "fcap_rule_near_limit_total", "decisions whose rule had less than 10% of its limit remaining before the message",
      "fcap_degraded_decisions_total", "decisions made by the failure policy instead of the store",
      "fcap_store_errors_total", "failed store calls by reason",
      "fcap_http_refused_total", "requests refused before anything was decided, by error code",
      "fcap_auth_failures_total", "requests refused for a missing, malformed or unknown API key",
      "fcap_suppressed_decisions_total", "decisions refused because the recipient is on the tenant's suppression list",
      "fcap_deferred_decisions_total", "decisions not admitted now but booked for a later instant (also counted as "
          + "denied in fcap_decisions_total)");
  /**
   * The buckets of {@code fcap_deferred_ahead_seconds}: a few fixed bounds from a second to the 7 days a
   * deferral may reach, so that a tenant's histogram costs a dozen series, not a percentile histogram's
   * seventy.
   */
  static final double[] DEFERRED_BUCKETS = {1, 10, 60, 300, 900, 3_600, 4 * 3_600, 12 * 3_600, 86_400, 2 * 86_400,
      7 * 86_400};

  public ServerMetrics() {
    this(DEFAULT_MAX_TENANTS, DEFAULT_MAX_RULES_PER_TENANT);
  }

  public ServerMetrics(int maxTenants, int maxRulesPerTenant) {
    this.maxTenants = maxTenants;
    this.maxRulesPerTenant = maxRulesPerTenant;
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text exposition. */
  public String scrape() {
    refreshRuleLimits();
    return registry.scrape();
  }

  /**
   * The exposition restricted to series labelled with a tenant that {@code visible} accepts; series
   * without a tenant label, and the {@code _other} overflow (which mixes tenants), are left out.
   */
  public String scrape(Predicate<String> visible) {
    refreshRuleLimits();
    StringBuilder out = new StringBuilder();
    StringBuilder header = new StringBuilder();
    for (String line : registry.scrape().split("\n")) {
      if (line.startsWith("#")) {
        if (line.startsWith("# HELP")) {
          header.setLength(0);
        }
        header.append(line).append('\n');
        continue;
      }
      Matcher m = TENANT_LABEL.matcher(line);
      if (m.find() && !m.group(1).equals(OVERFLOW) && visible.test(m.group(1))) {
        out.append(header).append(line).append('\n');
        header.setLength(0);
      }
    }
    return out.toString();
  }

  /** Where {@code fcap_rule_limit} reads the policies in force; read at every scrape, so it never goes stale. */
  public void ruleLimits(Supplier<? extends Collection<Policy>> policiesInForce) {
    this.policies = policiesInForce;
  }

  private void refreshRuleLimits() {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    for (Policy p : policies.get()) {
      for (Rule r : p.rules()) {
        rows.add(MultiGauge.Row.of(Tags.of("tenant", p.tenant(), "rule", r.id(), "mode",
            r.mode().id()), r.limit()));
      }
    }
    ruleLimits.register(rows, true);
  }

  /** Counts a decision (not dry runs: those change nothing and are not traffic). */
  public void decision(String tenant, Decision d) {
    TenantMeters t = meters(tenant);
    (d.allowed() ? t.allowed : t.denied).increment();
    if (d.suppressedReason() != null) {
      counter("fcap_suppressed_decisions_total", "tenant", t.tenant).increment();
    }
    if (d.deferred()) {
      t.deferred().increment();
      t.ahead().record(Math.max(0, d.sendAt() - d.time()) / 1000.0);
    }
    for (RuleOutcome r : d.rules()) {
      Counter[] c = t.rules.get(r.id());
      if (c == null) {
        c = t.admit(r.id());
      }
      c[r.allowed() ? 0 : r.enforced() ? 1 : 2].increment();
      if (r.remaining() * 10 < r.limit()) {
        c[3].increment();
      }
    }
  }

  private TenantMeters meters(String tenant) {
    TenantMeters t = tenants.get(tenant);
    if (t != null) {
      return t;
    }
    return tenants.size() >= maxTenants ? overflow() : admit(tenant);
  }

  /** A new tenant gets its own series while there is room; checked and added under one lock. */
  private synchronized TenantMeters admit(String tenant) {
    TenantMeters t = tenants.get(tenant);
    if (t != null) {
      return t;
    }
    if (tenants.size() >= maxTenants) {
      return overflow();
    }
    t = new TenantMeters(tenant);
    tenants.put(tenant, t);
    return t;
  }

  private synchronized TenantMeters overflow() {
    if (overflow == null) {
      overflow = new TenantMeters(OVERFLOW);
    }
    return overflow;
  }

  /**
   * The decision counters of one tenant, found by two lookups on strings whose hash is cached (the
   * rule ids are the policy's own strings), instead of building a key string per rule and decision.
   */
  private final class TenantMeters {
    final String tenant;
    final Counter allowed;
    final Counter denied;
    final Map<String, Counter[]> rules = new ConcurrentHashMap<>();
    /** Made at the tenant's first deferral: a tenant that never defers shows no series for it. */
    private volatile Counter deferred;
    private volatile DistributionSummary ahead;

    TenantMeters(String tenant) {
      this.tenant = tenant;
      this.allowed = counter("fcap_decisions_total", "tenant", tenant, "outcome", "allowed");
      this.denied = counter("fcap_decisions_total", "tenant", tenant, "outcome", "denied");
    }

    private Counter[] overflowRule;

    Counter deferred() {
      Counter c = deferred;
      return c != null ? c : (deferred = counter("fcap_deferred_decisions_total", "tenant", tenant));
    }

    DistributionSummary ahead() {
      DistributionSummary s = ahead;
      if (s == null) {
        // registering again returns the meter registered first: a race makes one meter, not two
        s = DistributionSummary.builder("fcap_deferred_ahead").baseUnit("seconds")
            .description("how far ahead deferred decisions booked their message: sendAt minus the decision's time")
            .tag("tenant", tenant).serviceLevelObjectives(DEFERRED_BUCKETS).register(registry);
        ahead = s;
      }
      return s;
    }

    /** The counters of a rule: its own while the tenant has room, otherwise {@code _other}'s. */
    synchronized Counter[] admit(String rule) {
      Counter[] c = rules.get(rule);
      if (c != null) {
        return c;
      }
      if (rules.size() >= maxRulesPerTenant) {
        if (overflowRule == null) {
          overflowRule = ruleCounters(OVERFLOW);
        }
        return overflowRule;
      }
      c = ruleCounters(rule);
      rules.put(rule, c);
      return c;
    }

    Counter[] ruleCounters(String rule) {
      return new Counter[] {
          counter("fcap_rule_decisions_total", "tenant", tenant, "rule", rule, "outcome", "allowed"),
          counter("fcap_rule_decisions_total", "tenant", tenant, "rule", rule, "outcome", "blocked"),
          counter("fcap_rule_decisions_total", "tenant", tenant, "rule", rule, "outcome", "shadow_blocked"),
          counter("fcap_rule_near_limit_total", "tenant", tenant, "rule", rule)};
    }
  }

  public void degraded(String tenant, String action) {
    counter("fcap_degraded_decisions_total", "tenant", meters(tenant).tenant, "action", action).increment();
  }

  public Timer decisionTimer(String op) {
    return timers.computeIfAbsent("decision:" + op, k -> Timer.builder("fcap_decision_seconds")
        .description("time to answer a decision request, from parsed request to answer")
        .tag("op", op).publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
        .maximumExpectedValue(Duration.ofSeconds(5)).register(registry));
  }

  public Timer storeTimer(String op) {
    return timers.computeIfAbsent("store:" + op, k -> Timer.builder("fcap_store_seconds")
        .description("latency of store calls").tag("op", op).publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofNanos(1_000)).maximumExpectedValue(Duration.ofSeconds(5)).register(registry));
  }

  public void recordDecisionNanos(String op, long nanos) {
    decisionTimer(op).record(nanos, TimeUnit.NANOSECONDS);
  }

  /** A request refused before anything was decided for it; {@code reason} is the error code. */
  public void httpRefused(String reason) {
    counter("fcap_http_refused_total", "reason", reason).increment();
  }

  /** A request whose API key was missing ({@code missing}), malformed or unknown. */
  public void authFailure(String reason) {
    counter("fcap_auth_failures_total", "reason", reason).increment();
  }

  public void storeError(String reason) {
    counter("fcap_store_errors_total", "reason", reason).increment();
  }

  /** The number of entries in {@code tenant}'s suppression list, as its last change left it. */
  public void suppressionEntries(String tenant, long entries) {
    suppressionEntries.computeIfAbsent(meters(tenant).tenant, t -> {
      AtomicLong v = new AtomicLong();
      Gauge.builder("fcap_suppression_entries", v, AtomicLong::get).tag("tenant", t)
          .description("entries in the tenant's suppression list (expired ones until dropped)").register(registry);
      return v;
    }).set(entries);
  }

  public void policyVersion(String tenant, long version) {
    policyVersions.computeIfAbsent(tenant, t -> {
      AtomicLong v = new AtomicLong();
      Gauge.builder("fcap_policy_version", v, AtomicLong::get).tag("tenant", t)
          .description("version of the tenant's policy in force").register(registry);
      return v;
    }).set(version);
  }

  /** Registers a gauge read when scraped. */
  public <T> void gauge(String name, String description, T source, ToDoubleFunction<T> value) {
    Gauge.builder(name, source, value).description(description).register(registry);
  }

  /** Registers a monotonic counter read when scraped. */
  public <T> void functionCounter(String name, String description, T source, ToDoubleFunction<T> value) {
    FunctionCounter.builder(name, source, value).description(description).register(registry);
  }

  private Counter counter(String name, String... tags) {
    StringBuilder key = new StringBuilder(name);
    for (String t : tags) {
      key.append('\0').append(t);
    }
    Counter c = counters.get(key.toString());
    return c != null ? c : counters.computeIfAbsent(key.toString(), k -> Counter.builder(name).tags(tags)
        .description(java.util.Objects.requireNonNull(HELP.get(name), () -> "no HELP text for " + name))
        .register(registry));
  }

  public void close() {
    registry.close();
  }
}
