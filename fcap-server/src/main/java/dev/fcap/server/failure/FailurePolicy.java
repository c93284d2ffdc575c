package dev.fcap.server.failure;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * How the server decides when the store fails (docs/server.md, "When the store fails").
 *
 * @param timeout the deadline of one store call ({@code store.timeout}): a batch is split into calls
 *     of at most {@code callSize} requests, each with this deadline; a call past it fails as busy
 *     (HTTP 429), it does not start an outage
 * @param defaultAction for categories not listed
 * @param categories per message category; {@code transactional} is {@code allow} unless configured
 * @param probeInterval how often a failing or failed store is probed
 * @param window how long the store must fail (every call and probe since the first failure) before
 *     an outage is declared and the failure policy decides ({@code failure.window})
 * @param callSize the most requests in one store call ({@code store.callSize})
 * @param journalCapacity the most decisions the outage store admits (they are written back to the
 *     store when it returns); past it the outage store refuses ({@code failure.journal})
 * @param whenFull the action for every category when the embedded store is full and cannot hold a
 *     request's new partition ({@code failure.full}); null: each category's own action, as in an outage
 * @param onReset what decisions do once a shared store is found to have lost its data
 *     ({@code failure.storeReset})
 */
public record FailurePolicy(Duration timeout, FailureAction defaultAction, Map<String, FailureAction> categories,
    Duration probeInterval, Duration window, int callSize, int journalCapacity, FailureAction whenFull,
    OnReset onReset) {

  /** What decisions do once a shared store is found to have lost its data ({@code failure.storeReset}). */
  public enum OnReset {
    /** Decide on the store as usual: it counts from zero (the loss is logged, counted and shown). */
    DECIDE,
    /**
     * Decide by the failure policy, as in an outage, until the longest window of the rules in force
     * has passed since the loss was noticed: by then the store has seen every message that counts.
     */
    POLICY;

    public String id() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static java.util.Optional<OnReset> fromId(String id) {
      for (OnReset r : values()) {
        if (r.id().equals(id)) {
          return java.util.Optional.of(r);
        }
      }
      return java.util.Optional.empty();
    }
  }

  public static final String TRANSACTIONAL = "transactional";
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(500);
  public static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofSeconds(1);
  public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(1);
  public static final int DEFAULT_CALL_SIZE = 500;
  public static final int DEFAULT_JOURNAL_CAPACITY = 1_000_000;
  /** A full store is no outage: the node's side store can decide exactly what it holds. */
  public static final FailureAction DEFAULT_WHEN_FULL = FailureAction.LOCAL;
  /** A full store's refusals must stop for this many probe intervals before it counts as not full. */
  public static final int FULL_QUIET_PROBES = 10;

  public FailurePolicy {
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(defaultAction, "defaultAction");
    Objects.requireNonNull(probeInterval, "probeInterval");
    Objects.requireNonNull(window, "window");
    Objects.requireNonNull(onReset, "onReset");
    if (callSize < 1 || journalCapacity < 0) {
      throw new IllegalArgumentException("callSize must be positive and journalCapacity not negative");
    }
    HashMap<String, FailureAction> c = new HashMap<>(categories);
    c.putIfAbsent(TRANSACTIONAL, FailureAction.ALLOW);
    categories = Map.copyOf(c);
  }

  /** A policy that decides as usual on a store that lost its data ({@link OnReset#DECIDE}). */
  public FailurePolicy(Duration timeout, FailureAction defaultAction, Map<String, FailureAction> categories,
      Duration probeInterval, Duration window, int callSize, int journalCapacity, FailureAction whenFull) {
    this(timeout, defaultAction, categories, probeInterval, window, callSize, journalCapacity, whenFull,
        OnReset.DECIDE);
  }

  /** A policy with the default action when the store is full ({@link #DEFAULT_WHEN_FULL}). */
  public FailurePolicy(Duration timeout, FailureAction defaultAction, Map<String, FailureAction> categories,
      Duration probeInterval, Duration window, int callSize, int journalCapacity) {
    this(timeout, defaultAction, categories, probeInterval, window, callSize, journalCapacity, DEFAULT_WHEN_FULL);
  }

  public static FailurePolicy defaults() {
    return new FailurePolicy(DEFAULT_TIMEOUT, FailureAction.LOCAL, Map.of(), DEFAULT_PROBE_INTERVAL, DEFAULT_WINDOW,
        DEFAULT_CALL_SIZE, DEFAULT_JOURNAL_CAPACITY);
  }

  /** The action for a message of {@code category} (null: no category). */
  public FailureAction actionFor(String category) {
    return category == null ? defaultAction : categories.getOrDefault(category, defaultAction);
  }

  /** The action for a message of {@code category} whose new partition the full store cannot hold. */
  public FailureAction actionWhenFull(String category) {
    return whenFull != null ? whenFull : actionFor(category);
  }

  /** How long a full store must refuse nothing before it counts as not full (logged, {@code /ready}). */
  public long fullQuietMs() {
    return probeInterval.toMillis() * FULL_QUIET_PROBES;
  }
}
