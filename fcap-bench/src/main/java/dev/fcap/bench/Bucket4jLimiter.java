package dev.fcap.bench;

import dev.fcap.model.Message;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.local.LocalBucketBuilder;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Bucket4j: one local bucket per recipient with two bandwidths (15/min, 50/24 h) and one per
 * (recipient, content) with two (2/59 s, 5/59 min). Each bandwidth refills intervally: its full
 * limit at once every period, periods counted from the bucket's creation (a fixed window per key,
 * not a sliding one). A bucket consumes from all its bandwidths atomically; across the two buckets
 * the recipient token is refunded with {@code addTokens} when the content bucket refuses.
 *
 * <p>By default on Bucket4j's own clock (the system's milliseconds); given a clock, on that one, as
 * {@code fcap-sim} is: the same stream then meets the limits at the same rates for both.
 */
final class Bucket4jLimiter implements CapLimiter {
  private final ConcurrentHashMap<String, Bucket> recipients = new ConcurrentHashMap<>(1 << 20);
  private final ConcurrentHashMap<RecipientContent, Bucket> contents = new ConcurrentHashMap<>(1 << 21);
  /** The buckets' clock. */
  private final TimeMeter clock;

  /** On the system's milliseconds, Bucket4j's default clock. */
  Bucket4jLimiter() {
    this.clock = TimeMeter.SYSTEM_MILLISECONDS;
  }

  /** On {@code epochMs} (the benchmarks' simulated clock). */
  Bucket4jLimiter(LongSupplier epochMs) {
    this.clock = new TimeMeter() {
      @Override
      public long currentTimeNanos() {
        return epochMs.getAsLong() * 1_000_000L;
      }

      @Override
      public boolean isWallClockBased() {
        return true; // epoch time, as the system's milliseconds are
      }
    };
  }

  private LocalBucketBuilder builder() {
    return Bucket.builder().withCustomTimePrecision(clock);
  }

  @Override
  public boolean tryAcquire(Message m) {
    Bucket r = recipients.get(m.recipient());
    if (r == null) {
      r = recipients.computeIfAbsent(m.recipient(), k -> builder()
          .addLimit(l -> l.capacity(SeedPolicy.PER_MINUTE).refillIntervally(SeedPolicy.PER_MINUTE, SeedPolicy.MINUTE))
          .addLimit(l -> l.capacity(SeedPolicy.PER_DAY).refillIntervally(SeedPolicy.PER_DAY, SeedPolicy.DAY))
          .build());
    }
    if (!r.tryConsume(1)) {
      return false;
    }
    RecipientContent key = new RecipientContent(m.recipient(), m.content());
    Bucket c = contents.get(key);
    if (c == null) {
      c = contents.computeIfAbsent(key, k -> builder()
          .addLimit(l -> l.capacity(SeedPolicy.SAME_CONTENT_59S)
              .refillIntervally(SeedPolicy.SAME_CONTENT_59S, SeedPolicy.S59))
          .addLimit(l -> l.capacity(SeedPolicy.SAME_CONTENT_59M)
              .refillIntervally(SeedPolicy.SAME_CONTENT_59M, SeedPolicy.M59))
          .build());
    }
    if (c.tryConsume(1)) {
      return true;
    }
    r.addTokens(1);
    return false;
  }
}
