package dev.fcap.server.audit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The last few denials of each recipient, for {@code inspect}: at most {@code perRecipient} per
 * recipient and {@code maxRecipients} recipients (the least recently denied are forgotten first).
 * Bounded whatever the traffic, so a flood of denials cannot grow the heap.
 *
 * <p><b>Across restarts.</b> Kept in memory; one {@link #savedIn saved in} a file is read from it at
 * the start (through the same bounds) and written to it by {@link #save()} at a graceful stop, so a
 * kill -9 loses the denials since the last save. {@link #forget} is an erasure: when the file holds
 * the recipient it is rewritten before {@code forget} returns, so a forgotten recipient's denials
 * never come back after a restart. The file is written outside the lock that decisions take: a save
 * copies the denials, then writes the copy.
 */
public final class RecentDenials {
  /** One remembered denial. */
  public record Denial(String decisionId, long time, List<String> blockedBy, String channel, String category) {}

  /** A recipient's denials, oldest first. */
  record Held(String tenant, String recipient, List<Denial> denials) {}

  private final int perRecipient;
  private final LinkedHashMap<String, ArrayDeque<Denial>> byRecipient;
  /** Null: memory only. */
  private final DenialsFile file;
  /** Whom the file holds (guarded by {@code file}): a forget of anyone else needs no rewrite. */
  private Set<String> onDisk = Set.of();

  public RecentDenials(int perRecipient, int maxRecipients) {
    this(perRecipient, maxRecipients, null);
  }

  private RecentDenials(int perRecipient, int maxRecipients, DenialsFile file) {
    this.perRecipient = perRecipient;
    this.file = file;
    this.byRecipient = new LinkedHashMap<>(1024, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<String, ArrayDeque<Denial>> eldest) {
        return size() > maxRecipients;
      }
    };
  }

  /**
   * Recent denials saved in {@code file}, starting with what it holds. A missing file is empty; one
   * that cannot be read is logged, set aside as {@code FILE.corrupt}, and the denials start empty.
   */
  public static RecentDenials savedIn(Path file, int perRecipient, int maxRecipients) {
    RecentDenials r = new RecentDenials(perRecipient, maxRecipients, new DenialsFile(file));
    r.load();
    return r;
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

  /**
   * Erases a recipient's denials, from the file too when it holds them.
   *
   * @throws UncheckedIOException the file holds the recipient and could be neither rewritten nor
   *     deleted (the memory is erased; forgetting again retries the file)
   */
  public void forget(String tenant, String recipient) {
    String key = key(tenant, recipient);
    synchronized (byRecipient) {
      byRecipient.remove(key);
    }
    if (file == null) {
      return;
    }
    synchronized (file) {
      if (onDisk.contains(key)) {
        try {
          write();
        } catch (IOException e) {
          file.deleteInstead(e);
          onDisk = Set.of();
        }
      }
    }
  }

  /** Writes every recipient's denials to the file (a graceful stop); nothing when memory only. */
  public void save() throws IOException {
    if (file == null) {
      return;
    }
    synchronized (file) {
      write();
    }
  }

  private void write() throws IOException {
    List<Held> all = held();
    if (all.isEmpty() && onDisk.isEmpty() && !file.exists()) {
      return;
    }
    file.write(all);
    Set<String> keys = new HashSet<>();
    all.forEach(h -> keys.add(key(h.tenant(), h.recipient())));
    onDisk = keys;
  }

  private void load() {
    synchronized (file) {
      Set<String> keys = new HashSet<>();
      boolean read = file.read(h -> {
        keys.add(key(h.tenant(), h.recipient()));
        h.denials().forEach(d -> add(h.tenant(), h.recipient(), d));
      });
      if (!read) {
        synchronized (byRecipient) {
          byRecipient.clear();
        }
        keys.clear();
      }
      onDisk = keys;
    }
  }

  /** Every recipient's denials, the least recently denied recipient first. */
  private List<Held> held() {
    synchronized (byRecipient) {
      List<Held> out = new ArrayList<>(byRecipient.size());
      byRecipient.forEach((key, q) -> {
        int colon = key.indexOf(':');
        int end = colon + 1 + Integer.parseInt(key.substring(0, colon));
        out.add(new Held(key.substring(colon + 1, end), key.substring(end), List.copyOf(q)));
      });
      return out;
    }
  }

  private static String key(String tenant, String recipient) {
    return tenant.length() + ":" + tenant + recipient;
  }
}
