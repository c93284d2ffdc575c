package dev.fcap.bench;

import dev.fcap.model.Message;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Resilience4j: one {@link AtomicRateLimiter} per limit and key (a RateLimiter has a single limit):
 * two per recipient, two per (recipient, content). {@code limitForPeriod} permits per
 * {@code limitRefreshPeriod}, the cycles counted from the limiter's creation (fixed windows).
 * There is no way to give a permit back, so all-or-nothing is emulated by reading the available
 * permissions of all four first and acquiring only if all have one: exact on one thread; on two, a
 * race between the read and the acquisition refuses the message but keeps the permits taken.
 */
final class Resilience4jLimiter implements CapLimiter {
  private static final RateLimiterConfig MINUTE = config(SeedPolicy.PER_MINUTE, SeedPolicy.MINUTE);
  private static final RateLimiterConfig DAY = config(SeedPolicy.PER_DAY, SeedPolicy.DAY);
  private static final RateLimiterConfig S59 = config(SeedPolicy.SAME_CONTENT_59S, SeedPolicy.S59);
  private static final RateLimiterConfig M59 = config(SeedPolicy.SAME_CONTENT_59M, SeedPolicy.M59);

  private final ConcurrentHashMap<String, Pair> recipients = new ConcurrentHashMap<>(1 << 20);
  private final ConcurrentHashMap<RecipientContent, Pair> contents = new ConcurrentHashMap<>(1 << 21);

  private record Pair(RateLimiter first, RateLimiter second) {
    boolean available() {
      return first.getMetrics().getAvailablePermissions() > 0 && second.getMetrics().getAvailablePermissions() > 0;
    }

    /** False if another thread took a permit since {@link #available}; what was taken stays taken. */
    boolean acquire() {
      return first.acquirePermission(1) & second.acquirePermission(1);
    }
  }

  private static RateLimiterConfig config(int limit, Duration period) {
    return RateLimiterConfig.custom().limitForPeriod(limit).limitRefreshPeriod(period)
        .timeoutDuration(Duration.ZERO).build();
  }

  @Override
  public boolean tryAcquire(Message m) {
    Pair r = recipients.get(m.recipient());
    if (r == null) {
      r = recipients.computeIfAbsent(m.recipient(),
          k -> new Pair(new AtomicRateLimiter(k, MINUTE), new AtomicRateLimiter(k, DAY)));
    }
    RecipientContent key = new RecipientContent(m.recipient(), m.content());
    Pair c = contents.get(key);
    if (c == null) {
      c = contents.computeIfAbsent(key,
          k -> new Pair(new AtomicRateLimiter(k.recipient(), S59), new AtomicRateLimiter(k.recipient(), M59)));
    }
    if (!r.available() || !c.available()) {
      return false;
    }
    return r.acquire() & c.acquire();
  }
}
