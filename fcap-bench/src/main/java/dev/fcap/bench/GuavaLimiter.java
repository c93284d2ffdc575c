package dev.fcap.bench;

import com.google.common.util.concurrent.RateLimiter;
import dev.fcap.model.Message;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Guava: one {@link RateLimiter} per limit and key, each created with the limit's average rate
 * (15/min = 0.25 permits/s, ...). Guava's public API only builds SmoothBursty limiters that store at
 * most one second of permits, so a limiter admits one message and then one per 1/rate seconds: the
 * rate of each rule, never its burst (a second message within 4 s is refused though the rule allows
 * 15 per minute). A limiter cannot be peeked or refunded: the four are tried in order and a refusal
 * by a later one keeps what the earlier ones took.
 */
@SuppressWarnings("UnstableApiUsage")
final class GuavaLimiter implements CapLimiter {
  private final ConcurrentHashMap<String, Pair> recipients = new ConcurrentHashMap<>(1 << 20);
  private final ConcurrentHashMap<RecipientContent, Pair> contents = new ConcurrentHashMap<>(1 << 21);

  private record Pair(RateLimiter first, RateLimiter second) {
    boolean tryAcquire() {
      return first.tryAcquire(1, 0, TimeUnit.NANOSECONDS) && second.tryAcquire(1, 0, TimeUnit.NANOSECONDS);
    }
  }

  private static double perSecond(int limit, java.time.Duration window) {
    return limit * 1000.0 / window.toMillis();
  }

  @Override
  public boolean tryAcquire(Message m) {
    Pair r = recipients.get(m.recipient());
    if (r == null) {
      r = recipients.computeIfAbsent(m.recipient(), k -> new Pair(
          RateLimiter.create(perSecond(SeedPolicy.PER_MINUTE, SeedPolicy.MINUTE)),
          RateLimiter.create(perSecond(SeedPolicy.PER_DAY, SeedPolicy.DAY))));
    }
    if (!r.tryAcquire()) {
      return false;
    }
    RecipientContent key = new RecipientContent(m.recipient(), m.content());
    Pair c = contents.get(key);
    if (c == null) {
      c = contents.computeIfAbsent(key, k -> new Pair(
          RateLimiter.create(perSecond(SeedPolicy.SAME_CONTENT_59S, SeedPolicy.S59)),
          RateLimiter.create(perSecond(SeedPolicy.SAME_CONTENT_59M, SeedPolicy.M59))));
    }
    return c.tryAcquire();
  }
}
