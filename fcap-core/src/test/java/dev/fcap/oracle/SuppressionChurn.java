package dev.fcap.oracle;

import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Suppression;
import dev.fcap.store.SuppressionList;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Entries of a suppression list coming and going beside a {@link Traffic} stream, and the oracle's
 * own statement of which entry refuses a message. Before a decision, now and then an entry of a
 * recipient already seen is put (every channel and category, or one or two of them; no expiry or
 * one up to 10 minutes ahead) or removed, through the system's {@link SuppressionList}. Whether a
 * message is suppressed is stated here, apart from {@code Suppression.covers}: an entry of its
 * tenant and recipient whose channels and categories (empty: all) hold the message's, not expired
 * at the decision's time. A suppressed message must be refused with {@code suppressed} and the
 * entry's reason, {@code sendAt} at the expiry or later (a rule may refuse until later) or -1 when
 * the entry never expires, and count nothing: the oracle never sees it, so its counts would differ
 * at once if the system had recorded it.
 *
 * <p>Deterministic from its seed, and drawn apart from the traffic's random numbers, so a stream
 * is the same with and without it.
 */
public final class SuppressionChurn {
  /**
   * A start for traffic with expiring entries on Redis, which drops an entry at its expiry by its
   * own clock ({@code PEXPIREAT}): the traffic's time must lie after the machine's for an entry to
   * live until the traffic reaches its expiry. 2037-01-01T00:00Z; 2037 has 2026's calendar.
   */
  public static final long LATER_START = 2_114_380_800_000L;

  private static final String[] CHANNELS = {"sms", "push", "email"};
  private static final String[] CATEGORIES = {"service", "promo", "marketing", "otp"};

  private final SplittableRandom random;
  /** Changes per decision: one in {@code every}. */
  private final int every;
  private final Map<String, Suppression> entries = new HashMap<>(); // tenant "/" recipient -> entry
  private final List<String> seen = new ArrayList<>();
  private final Set<String> seenSet = new HashSet<>();
  private long changes;

  /** An entry comes or goes before one decision in {@code every}, on average. */
  public SuppressionChurn(long seed, int every) {
    this.random = new SplittableRandom(seed ^ 0x5abbL);
    this.every = every;
  }

  /** How many entries were put or removed. */
  public long changes() {
    return changes;
  }

  /**
   * Before {@code m} is decided at {@code time}: notes its recipient, and now and then puts or
   * removes an entry of a recipient seen so far in {@code list}.
   */
  public void beforeDecision(SuppressionList list, String tenant, Message m, long time) {
    String key = tenant + "/" + m.recipient();
    if (seenSet.add(key)) {
      seen.add(key);
    }
    if (random.nextInt(every) != 0) {
      return;
    }
    String[] tr = seen.get(random.nextInt(seen.size())).split("/", 2);
    changes++;
    if (random.nextInt(3) == 0) {
      list.remove(tr[0], tr[1]);
      entries.remove(tr[0] + "/" + tr[1]);
      return;
    }
    Suppression e = new Suppression(tr[1], some(CHANNELS), some(CATEGORIES), "reason " + changes, "oracle", time,
        random.nextBoolean() ? Suppression.NEVER : time + 1 + random.nextInt(600_000));
    list.put(tr[0], e);
    entries.put(tr[0] + "/" + tr[1], e);
  }

  /** The entry that suppresses {@code m} of {@code tenant} at {@code time}, or null. */
  public Suppression covering(String tenant, Message m, long time) {
    Suppression e = entries.get(tenant + "/" + m.recipient());
    if (e == null) {
      return null;
    }
    boolean live = e.expiresAt() == Suppression.NEVER || time < e.expiresAt();
    boolean channel = e.channels().isEmpty() || e.channels().contains(m.channel());
    boolean category = e.categories().isEmpty() || e.categories().contains(m.category());
    return live && channel && category ? e : null;
  }

  /** What is wrong with {@code actual}, the decision on a message that {@code e} suppresses; empty if nothing. */
  public static List<String> judge(Decision actual, Suppression e) {
    List<String> wrong = new ArrayList<>();
    if (actual.allowed()) {
      wrong.add("admitted although suppressed by " + e);
    }
    if (!actual.blockedBy().contains(Suppression.BLOCKED_BY)) {
      wrong.add("blockedBy " + actual.blockedBy() + " lacks " + Suppression.BLOCKED_BY);
    }
    if (!e.reason().equals(actual.suppressedReason())) {
      wrong.add("suppressedReason " + actual.suppressedReason() + ", entry's " + e.reason());
    }
    if (e.expiresAt() == Suppression.NEVER) {
      if (actual.sendAt() != -1 || actual.retryAfterMs() != -1) {
        wrong.add("sendAt " + actual.sendAt() + " retryAfterMs " + actual.retryAfterMs() + ", entry never expires");
      }
    } else if (actual.sendAt() == -1 ? actual.retryAfterMs() != -1
        : actual.sendAt() < e.expiresAt() || actual.retryAfterMs() < e.expiresAt() - actual.time()) {
      wrong.add("sendAt " + actual.sendAt() + " retryAfterMs " + actual.retryAfterMs() + " at " + actual.time()
          + ", entry expires at " + e.expiresAt());
    }
    return wrong;
  }

  /** No values (every one) half of the time, else one or two of them. */
  private List<String> some(String[] values) {
    if (random.nextBoolean()) {
      return List.of();
    }
    List<String> out = new ArrayList<>(List.of(values[random.nextInt(values.length)]));
    String other = values[random.nextInt(values.length)];
    if (random.nextBoolean() && !out.contains(other)) {
      out.add(other);
    }
    return out;
  }
}
