package dev.fcap.server.decision;

import dev.fcap.engine.Engine;
import dev.fcap.model.InvalidMessageException;
import dev.fcap.model.Suppression;
import dev.fcap.server.audit.AuditLog;
import dev.fcap.server.auth.Principal;
import dev.fcap.server.auth.Role;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.metrics.ServerMetrics;
import dev.fcap.store.SuppressionList;
import dev.fcap.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * What the APIs call to read and change the tenants' suppression lists: the role check (the
 * {@code suppress} role, which {@code admin} includes), the entry's validation, who added it and
 * when, and an audit line for every change. Changes are forced to disk before they return, so a
 * transport calls these off its event loop.
 */
public final class SuppressionService {
  /** The most entries one page lists. */
  public static final int MAX_PAGE = 1000;
  /** How long a count of a list in a network store serves the gauge (see {@link #counted}). */
  static final long RECOUNT_MS = 60_000;
  /** When each tenant's list in a network store was last counted (epoch ms). */
  private final java.util.Map<String, Long> countedAt = new java.util.concurrent.ConcurrentHashMap<>();
  private final Engine engine;
  private final AuditLog audit;
  private final Clock clock;
  private final ServerMetrics metrics;

  SuppressionService(Engine engine, AuditLog audit, Clock clock, ServerMetrics metrics) {
    this.engine = engine;
    this.audit = audit;
    this.clock = clock;
    this.metrics = metrics;
  }

  /** Adds or replaces the entry of {@code recipient}; it refuses every decision in its scope once this returns. */
  public Suppression put(Principal who, String tenant, String recipient, List<String> channels,
      List<String> categories, String reason, long expiresAt) {
    who.require(Role.SUPPRESS, tenant);
    Suppression entry = entry(who, recipient, channels, categories, reason, expiresAt);
    long now = entry.addedAt();
    list().put(tenant, entry);
    audit.admin("suppression_put", now, tenant, recipient, 0, who.name(), entry.reason());
    counted(tenant, false);
    return entry;
  }

  /**
   * A valid entry added by {@code who} now, or a 400 naming the field: the recipient (an id of at
   * most 1,024 characters), the channels and categories, the reason, and an expiry in the future.
   */
  public Suppression entry(Principal who, String recipient, List<String> channels, List<String> categories,
      String reason, long expiresAt) {
    long now = clock.millis();
    Suppression entry;
    try {
      entry = new Suppression(recipient, channels, categories, reason, who.name(), now, expiresAt);
    } catch (InvalidMessageException e) {
      throw new ApiException(400, "invalid_field", e.getMessage(), e.field());
    }
    if (entry.expiredAt(now)) {
      throw new ApiException(400, "invalid_field", "expiresAt is in the past", "expiresAt");
    }
    return entry;
  }

  /**
   * Starts an import into {@code tenant}'s list, whose rows {@link Import#add} validates and writes in
   * batches; nothing is checked but the role here.
   */
  public Import startImport(Principal who, String tenant) {
    who.require(Role.SUPPRESS, tenant);
    return new Import(who, tenant, list());
  }

  /**
   * One import: rows are written {@link #BATCH} at a time (each batch durable before the next is
   * read), and the import is audited once, with its counts, when it {@link #finish finishes}.
   */
  public final class Import {
    /** Rows written together: one fsync (embedded) or one pipelined burst (Redis) each. */
    public static final int BATCH = 10_000;
    private final Principal who;
    private final String tenant;
    private final SuppressionList list;
    private final List<Suppression> batch = new java.util.ArrayList<>(BATCH);
    private long applied;
    private long rejected;

    private Import(Principal who, String tenant, SuppressionList list) {
      this.who = who;
      this.tenant = tenant;
      this.list = list;
    }

    /** Adds one row; a bad one is a 400 naming its field, and nothing of it is written. */
    public void add(String recipient, List<String> channels, List<String> categories, String reason, long expiresAt) {
      batch.add(entry(who, recipient, channels, categories, reason, expiresAt));
      if (batch.size() == BATCH) {
        flush();
      }
    }

    /** Counts a row the caller found bad. */
    public void rejected() {
      rejected++;
    }

    public long applied() {
      return applied;
    }

    public long rejectedRows() {
      return rejected;
    }

    /** Writes what is left and audits the import. */
    public void finish() {
      flush();
      audit.admin("suppression_import", clock.millis(), tenant, null, 0, who.name(),
          applied + " applied, " + rejected + " rejected");
      counted(tenant, true);
    }

    private void flush() {
      if (!batch.isEmpty()) {
        list.putAll(tenant, batch);
        applied += batch.size();
        batch.clear();
      }
    }
  }

  public Optional<Suppression> get(Principal who, String tenant, String recipient) {
    who.require(Role.SUPPRESS, tenant);
    return list().get(tenant, recipient);
  }

  /** Removes the entry of {@code recipient}; whether it had a live one. */
  public boolean remove(Principal who, String tenant, String recipient) {
    who.require(Role.SUPPRESS, tenant);
    boolean removed = list().remove(tenant, recipient);
    audit.admin("suppression_delete", clock.millis(), tenant, recipient, 0, who.name(), null);
    counted(tenant, false);
    return removed;
  }

  /**
   * Up to {@code limit} live entries after {@code cursor} (the recipient listed last; null: from the
   * first), in the list's order ({@link SuppressionList#page}).
   */
  public List<Suppression> page(Principal who, String tenant, String cursor, int limit) {
    who.require(Role.SUPPRESS, tenant);
    if (limit < 1 || limit > MAX_PAGE) {
      throw new ApiException(400, "invalid_field", "limit must be between 1 and " + MAX_PAGE, "limit");
    }
    return list().page(tenant, cursor, limit);
  }

  /**
   * Sets the tenant's entry gauge after a change. A list read in the decision's step lives in a
   * shared network store (Redis), where a count is a walk of the tenant's buckets, not a lookup:
   * there a change recounts at most once per {@link #RECOUNT_MS} per tenant, and an import always
   * ({@code force}), off the caller's thread, so a burst of changes costs one walk and no change
   * waits for it; the gauge may lag that long, and keeps its last count if a walk fails.
   */
  private void counted(String tenant, boolean force) {
    SuppressionList list = list();
    if (!list.checkedInStep()) {
      metrics.suppressionEntries(tenant, list.size(tenant));
      return;
    }
    long now = clock.millis();
    Long last = countedAt.get(tenant);
    if (!force && last != null && now - last < RECOUNT_MS && now >= last) {
      return;
    }
    countedAt.put(tenant, now);
    java.util.concurrent.CompletableFuture.runAsync(() -> metrics.suppressionEntries(tenant, list.size(tenant)));
  }

  private SuppressionList list() {
    return engine.suppressions().orElseThrow(() -> new ApiException(501, "suppressions_unsupported",
        "this server's store keeps no suppression lists; the embedded store does", null));
  }
}
