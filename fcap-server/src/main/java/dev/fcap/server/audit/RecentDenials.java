package dev.fcap.server.audit;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The last few denials of each recipient, for {@code inspect}: at most {@code perRecipient} per
 * recipient and {@code maxRecipients} recipients (the least recently denied are forgotten first).
 * Bounded whatever the traffic, so a flood of denials cannot grow the heap.
 */
public final class RecentDenials {
  /** One remembered denial. */
  public record Denial(String decisionId, long time, List<String> blockedBy, String channel, String category) {}

  private final int perRecipient;
  private final LinkedHashMap<String, ArrayDeque<Denial>> byRecipient;

  public RecentDenials(int perRecipient, int maxRecipients) {
    this.perRecipient = perRecipient;
    this.byRecipient = new LinkedHashMap<>(1024, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<String, ArrayDeque<Denial>> eldest) {
        return size() > maxRecipients;
      }
    };
  }

  public void add(String tenant, String recipient, Denial denial) {
    if (perRecipient == 0) {
      return;
    }
    synchronized (byRecipient) {
      ArrayDeque<Denial> q = byRecipient.computeIfAbsent(key(tenant, recipient), k -> new ArrayDeque<>());
      if (q.size() == perRecipient) {
        q.removeFirst();
      }
      q.addLast(denial);
    }
  }

  /** Newest first. */
  public List<Denial> of(String tenant, String recipient) {
    synchronized (byRecipient) {
      ArrayDeque<Denial> q = byRecipient.get(key(tenant, recipient));
      if (q == null) {
        return List.of();
      }
      List<Denial> out = new ArrayList<>(q.size());
      for (Iterator<Denial> it = q.descendingIterator(); it.hasNext(); ) {
        out.add(it.next());
      }
      return out;
    }
  }

  public void forget(String tenant, String recipient) {
    synchronized (byRecipient) {
      byRecipient.remove(key(tenant, recipient));
    }
  }

  private static String key(String tenant, String recipient) {
    return tenant.length() + ":" + tenant + recipient;
  }
}
