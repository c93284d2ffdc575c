package dev.fcap.store;

import dev.fcap.model.Suppression;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * The suppression lists of a store's tenants ({@link Suppression}): recipients that must receive
 * nothing. A store that keeps them is found by {@code store.as(SuppressionList.class)}; the engine
 * then refuses every decision in an entry's scope, with nothing recorded. A change is durable as
 * the store's state is, and seen by every decision that starts after it returns.
 */
public interface SuppressionList {

  /** Adds or replaces {@code entry} (keyed by its recipient) in {@code tenant}'s list. */
  void put(String tenant, Suppression entry);

  /** {@link #put} for many entries, made durable together (an import). */
  void putAll(String tenant, List<Suppression> entries);

  /** The entry of {@code recipient}, unless it has none or it has expired. */
  Optional<Suppression> get(String tenant, String recipient);

  /** Removes the entry of {@code recipient}; whether it had a live one. */
  boolean remove(String tenant, String recipient);

  /**
   * Up to {@code limit} live entries of {@code tenant} in the list's order, after {@code cursor} (the
   * recipient a page listed last, or any recipient; null: from the first). The order is fixed by the
   * recipients alone, so paging on by the last recipient lists every entry that stays in the list
   * once: recipient order on the embedded store; on Redis the order of the buckets the recipients
   * fall in, then recipient order within a bucket.
   */
  List<Suppression> page(String tenant, String cursor, int limit);

  /** How many entries {@code tenant}'s list holds (expired ones included until they are dropped). */
  long size(String tenant);

  /**
   * The entry that refuses a message of {@code tenant} to {@code recipient} on {@code channel} of
   * {@code category} at {@code now}, or null; answered in this process at once, without I/O. A store
   * that {@link #checkedInStep checks in its step} answers null.
   */
  Suppression find(String tenant, String recipient, String channel, String category, long now);

  /**
   * Whether the store reads a recipient's entry inside the atomic step of the recipient's partition
   * (a network store, shared by every node: a {@link SuppressionCheck} on the request), rather than
   * the engine reading {@link #find} in this process before the step.
   */
  default boolean checkedInStep() {
    return false;
  }

  /**
   * The key of {@code recipient}'s partition in {@code tenant} ({@code 'r' varint(len) tenant
   * recipient}, as the engine names it): where a store that checks in its step keeps the entry, so
   * that the step finds it beside the counters (in a cluster, in the same slot).
   */
  static byte[] partitionOf(String tenant, String recipient) {
    byte[] t = tenant.getBytes(StandardCharsets.UTF_8);
    byte[] r = recipient.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[1 + Varint.size(t.length) + t.length + r.length];
    out[0] = 'r';
    int at = Varint.write(out, 1, t.length);
    System.arraycopy(t, 0, out, at, t.length);
    System.arraycopy(r, 0, out, at + t.length, r.length);
    return out;
  }
}
