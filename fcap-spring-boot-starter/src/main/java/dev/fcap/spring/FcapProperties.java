package dev.fcap.spring;

import dev.fcap.client.ClientOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code fcap.*}: with {@code fcap.url} the application is a client of an fcap server; without it,
 * decisions are made in the application by an embedded engine with the rules of {@code fcap.rules}
 * or {@code fcap.rules-file}.
 *
 * <pre>
 * fcap:
 *   url: http://fcap:8080          # client mode
 *   api-key: ${FCAP_API_KEY}
 *   fallback: allow                # allow, deny or fail when the server cannot be reached
 * </pre>
 * <pre>
 * fcap:                            # embedded mode
 *   rules:
 *     - {id: recipient-per-minute, limit: 15, window: 1m, key: [recipient]}
 *     - {id: same-content-per-59s, limit: 2, window: 59s, key: [recipient, content]}
 * </pre>
 */
@ConfigurationProperties("fcap")
public class FcapProperties {
  /** The fcap server, e.g. http://fcap:8080; unset: decide in this application (embedded). */
  private String url;
  /** API key for the server (Authorization: Bearer). */
  private String apiKey;
  /** Longest wait for one answer of the server. */
  private Duration requestTimeout = ClientOptions.DEFAULT_REQUEST_TIMEOUT;
  /** Attempts per decision, the first included; retries reuse the message id, so nothing counts twice. */
  private int maxAttempts = ClientOptions.DEFAULT_MAX_ATTEMPTS;
  /** What a decision is when the server cannot be reached: allow, deny or fail (throw). */
  private FallbackMode fallback = FallbackMode.FAIL;
  /** Embedded mode: the tenant of the rules below. */
  private String tenant = "default";
  /** Embedded mode: a rules file (the server's format, policies per tenant). */
  private String rulesFile;
  /** Embedded mode: rules, as in a rules file. */
  private List<RuleProperties> rules = new ArrayList<>();
  /** Embedded mode: the zone of recipients whose messages carry none (an IANA id); unset: UTC. */
  private String timeZone;

  public enum FallbackMode { ALLOW, DENY, FAIL }

  /** One rule; the fields of the rules file (README, "Rules"). */
  public static class RuleProperties {
    private String id;
    private String description;
    private Long limit;
    private String window;
    private List<String> key = new ArrayList<>();
    private Map<String, List<String>> match = new LinkedHashMap<>();
    private Map<String, List<String>> exempt = new LinkedHashMap<>();
    private String algorithm;
    private Integer precision;
    private String mode;
    /** A fixed-window rule's zone: an IANA id, or recipient. */
    private String zone;
    /** A send-window rule: when messages may go, instead of limit, window and key. */
    private SendWindowProperties sendWindow;

    public String getZone() {
      return zone;
    }

    public void setZone(String zone) {
      this.zone = zone;
    }

    public SendWindowProperties getSendWindow() {
      return sendWindow;
    }

    public void setSendWindow(SendWindowProperties sendWindow) {
      this.sendWindow = sendWindow;
    }

    public String getId() {
      return id;
    }

    public void setId(String id) {
      this.id = id;
    }

    public String getDescription() {
      return description;
    }

    public void setDescription(String description) {
      this.description = description;
    }

    public Long getLimit() {
      return limit;
    }

    public void setLimit(Long limit) {
      this.limit = limit;
    }

    public String getWindow() {
      return window;
    }

    public void setWindow(String window) {
      this.window = window;
    }

    public List<String> getKey() {
      return key;
    }

    public void setKey(List<String> key) {
      this.key = key;
    }

    public Map<String, List<String>> getMatch() {
      return match;
    }

    public void setMatch(Map<String, List<String>> match) {
      this.match = match;
    }

    public Map<String, List<String>> getExempt() {
      return exempt;
    }

    public void setExempt(Map<String, List<String>> exempt) {
      this.exempt = exempt;
    }

    public String getAlgorithm() {
      return algorithm;
    }

    public void setAlgorithm(String algorithm) {
      this.algorithm = algorithm;
    }

    public Integer getPrecision() {
      return precision;
    }

    public void setPrecision(Integer precision) {
      this.precision = precision;
    }

    public String getMode() {
      return mode;
    }

    public void setMode(String mode) {
      this.mode = mode;
    }
  }

  /** A send window, as in a rules file: {@code zone}, {@code allow} ({@code days, from, to}), {@code closed}. */
  public static class SendWindowProperties {
    /** recipient (the default) or an IANA id. */
    private String zone;
    private List<IntervalProperties> allow = new ArrayList<>();
    /** Local dates, {@code YYYY-MM-DD}, with no window. */
    private List<String> closed = new ArrayList<>();

    public String getZone() {
      return zone;
    }

    public void setZone(String zone) {
      this.zone = zone;
    }

    public List<IntervalProperties> getAllow() {
      return allow;
    }

    public void setAllow(List<IntervalProperties> allow) {
      this.allow = allow;
    }

    public List<String> getClosed() {
      return closed;
    }

    public void setClosed(List<String> closed) {
      this.closed = closed;
    }
  }

  /** Local times [from, to), {@code HH:MM}, on the listed days (mon ... sun; empty: every day). */
  public static class IntervalProperties {
    private List<String> days = new ArrayList<>();
    private String from;
    private String to;

    public List<String> getDays() {
      return days;
    }

    public void setDays(List<String> days) {
      this.days = days;
    }

    public String getFrom() {
      return from;
    }

    public void setFrom(String from) {
      this.from = from;
    }

    public String getTo() {
      return to;
    }

    public void setTo(String to) {
      this.to = to;
    }
  }

  public String getTimeZone() {
    return timeZone;
  }

  public void setTimeZone(String timeZone) {
    this.timeZone = timeZone;
  }

  public String getUrl() {
    return url;
  }

  public void setUrl(String url) {
    this.url = url;
  }

  public String getApiKey() {
    return apiKey;
  }

  public void setApiKey(String apiKey) {
    this.apiKey = apiKey;
  }

  public Duration getRequestTimeout() {
    return requestTimeout;
  }

  public void setRequestTimeout(Duration requestTimeout) {
    this.requestTimeout = requestTimeout;
  }

  public int getMaxAttempts() {
    return maxAttempts;
  }

  public void setMaxAttempts(int maxAttempts) {
    this.maxAttempts = maxAttempts;
  }

  public FallbackMode getFallback() {
    return fallback;
  }

  public void setFallback(FallbackMode fallback) {
    this.fallback = fallback;
  }

  public String getTenant() {
    return tenant;
  }

  public void setTenant(String tenant) {
    this.tenant = tenant;
  }

  public String getRulesFile() {
    return rulesFile;
  }

  public void setRulesFile(String rulesFile) {
    this.rulesFile = rulesFile;
  }

  public List<RuleProperties> getRules() {
    return rules;
  }

  public void setRules(List<RuleProperties> rules) {
    this.rules = rules;
  }
}
