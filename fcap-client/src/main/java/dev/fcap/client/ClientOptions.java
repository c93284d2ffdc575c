package dev.fcap.client;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * How a {@link FcapClient} talks to the server. Immutable; {@link #builder(String)} makes one,
 * {@link #mutate()} copies one into a builder. Every setting has a public {@code DEFAULT_*}.
 *
 * <p>A call makes up to {@link #maxAttempts()} attempts, each bounded by {@link #requestTimeout()},
 * with a backoff between them that starts at {@link #retryBackoff()} and doubles up to
 * {@link #maxRetryBackoff()} (each wait drawn between half and all of it, so clients that lost the
 * server together do not come back together). Worst case a decision takes about
 * {@code maxAttempts * requestTimeout + the backoffs} before the {@link #fallback()} answers: with
 * the defaults 3 x 500 ms + 50 ms + 100 ms = 1.65 s.
 *
 * <p>Only what is safe is retried: a decision carries a {@code messageId} (the caller's, or one
 * generated for the call when {@link #generateMessageIds()}), so the server counts it once however
 * many attempts reach it. Without an id, a decision is retried only when the connection was refused
 * (the request never left); release, inspect, reset and checks are idempotent and always retried.
 */
public final class ClientOptions {
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofMillis(500);
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofMillis(500);
  public static final int DEFAULT_MAX_ATTEMPTS = 3;
  public static final Duration DEFAULT_RETRY_BACKOFF = Duration.ofMillis(50);
  public static final Duration DEFAULT_MAX_RETRY_BACKOFF = Duration.ofSeconds(1);
  public static final boolean DEFAULT_GENERATE_MESSAGE_IDS = true;
  /** No fallback: an unreachable server is an {@link FcapUnavailableException}. */
  public static final Fallback DEFAULT_FALLBACK = Fallback.fail();

  private final URI uri;
  private final String apiKey;
  private final Duration connectTimeout;
  private final Duration requestTimeout;
  private final int maxAttempts;
  private final Duration retryBackoff;
  private final Duration maxRetryBackoff;
  private final Fallback fallback;
  private final boolean generateMessageIds;
  private final Supplier<String> messageIds;

  private ClientOptions(Builder b) {
    this.uri = b.uri;
    this.apiKey = b.apiKey;
    this.connectTimeout = b.connectTimeout;
    this.requestTimeout = b.requestTimeout;
    this.maxAttempts = b.maxAttempts;
    this.retryBackoff = b.retryBackoff;
    this.maxRetryBackoff = b.maxRetryBackoff;
    this.fallback = b.fallback;
    this.generateMessageIds = b.generateMessageIds;
    this.messageIds = b.messageIds;
  }

  /** Options for the server at {@code url} ({@code http://host:port}), everything else default. */
  public static ClientOptions create(String url) {
    return builder(url).build();
  }

  public static Builder builder(String url) {
    return new Builder(url);
  }

  /** A builder holding these options. */
  public Builder mutate() {
    Builder b = new Builder(uri.toString());
    b.apiKey = apiKey;
    b.connectTimeout = connectTimeout;
    b.requestTimeout = requestTimeout;
    b.maxAttempts = maxAttempts;
    b.retryBackoff = retryBackoff;
    b.maxRetryBackoff = maxRetryBackoff;
    b.fallback = fallback;
    b.generateMessageIds = generateMessageIds;
    b.messageIds = messageIds;
    return b;
  }

  public URI uri() {
    return uri;
  }

  /** Null: no key (a server without keys listens on loopback only). */
  public String apiKey() {
    return apiKey;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  public Duration requestTimeout() {
    return requestTimeout;
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  public Duration retryBackoff() {
    return retryBackoff;
  }

  public Duration maxRetryBackoff() {
    return maxRetryBackoff;
  }

  public Fallback fallback() {
    return fallback;
  }

  public boolean generateMessageIds() {
    return generateMessageIds;
  }

  Supplier<String> messageIds() {
    return messageIds;
  }

  @Override
  public String toString() {
    return "ClientOptions[uri=" + uri + ", apiKey=" + (apiKey == null ? "none" : "***") + ", connectTimeout="
        + connectTimeout + ", requestTimeout=" + requestTimeout + ", maxAttempts=" + maxAttempts + ", retryBackoff="
        + retryBackoff + ", maxRetryBackoff=" + maxRetryBackoff + ", generateMessageIds=" + generateMessageIds + "]";
  }

  /** Mutable, not thread-safe. */
  public static final class Builder {
    private final URI uri;
    private String apiKey;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private Duration retryBackoff = DEFAULT_RETRY_BACKOFF;
    private Duration maxRetryBackoff = DEFAULT_MAX_RETRY_BACKOFF;
    private Fallback fallback = DEFAULT_FALLBACK;
    private boolean generateMessageIds = DEFAULT_GENERATE_MESSAGE_IDS;
    private Supplier<String> messageIds = () -> UUID.randomUUID().toString();

    private Builder(String url) {
      Objects.requireNonNull(url, "url");
      URI u = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
      if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme()) || u.getHost() == null) {
        throw new IllegalArgumentException("url must be http://host:port or https://host:port, got " + url);
      }
      this.uri = u;
    }

    /** Sent as {@code Authorization: Bearer <key>}. Default: none. */
    public Builder apiKey(String apiKey) {
      this.apiKey = apiKey;
      return this;
    }

    /** Default {@link #DEFAULT_CONNECT_TIMEOUT}. */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    /** Longest wait for one attempt's answer. Default {@link #DEFAULT_REQUEST_TIMEOUT}. */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive(timeout, "requestTimeout");
      return this;
    }

    /** Attempts per call, the first included (1: no retry). Default {@link #DEFAULT_MAX_ATTEMPTS}. */
    public Builder maxAttempts(int attempts) {
      if (attempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be at least 1, got " + attempts);
      }
      this.maxAttempts = attempts;
      return this;
    }

    /** First wait between attempts; doubles each time. Default {@link #DEFAULT_RETRY_BACKOFF}. */
    public Builder retryBackoff(Duration backoff) {
      this.retryBackoff = positive(backoff, "retryBackoff");
      return this;
    }

    /** Default {@link #DEFAULT_MAX_RETRY_BACKOFF}. */
    public Builder maxRetryBackoff(Duration backoff) {
      this.maxRetryBackoff = positive(backoff, "maxRetryBackoff");
      return this;
    }

    /** What a decision is when the server cannot be asked. Default {@link #DEFAULT_FALLBACK} (throw). */
    public Builder fallback(Fallback fallback) {
      this.fallback = Objects.requireNonNull(fallback, "fallback");
      return this;
    }

    /**
     * Give a message without a {@code messageId} a random one for the call, so retries are counted
     * once. Default {@link #DEFAULT_GENERATE_MESSAGE_IDS}.
     */
    public Builder generateMessageIds(boolean generate) {
      this.generateMessageIds = generate;
      return this;
    }

    /** Where generated message ids come from. Default: random UUIDs. */
    public Builder messageIds(Supplier<String> generator) {
      this.messageIds = Objects.requireNonNull(generator, "generator");
      return this;
    }

    public ClientOptions build() {
      return new ClientOptions(this);
    }

    private static Duration positive(Duration d, String name) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, got " + d);
      }
      return d;
    }
  }
}
