package dev.fcap.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Message;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The Bucket4j peer on a given clock ({@code bucket4j-sim}) refills by that clock and no other. */
class Bucket4jLimiterTest {
  private static Message to(String recipient, int content) {
    return Message.builder(recipient).content("content " + content).build();
  }

  @Test
  void refillsWhenTheGivenClockPassesTheMinute() {
    AtomicLong ms = new AtomicLong(1_800_000_000_000L);
    Bucket4jLimiter limiter = new Bucket4jLimiter(ms::get);
    for (int i = 0; i < SeedPolicy.PER_MINUTE; i++) {
      assertThat(limiter.tryAcquire(to("r", i))).as("message %d of the minute", i + 1).isTrue();
    }
    assertThat(limiter.tryAcquire(to("r", 100))).as("one over the minute's limit").isFalse();
    ms.addAndGet(SeedPolicy.MINUTE.toMillis() - 1);
    assertThat(limiter.tryAcquire(to("r", 101))).as("a millisecond before the refill").isFalse();
    ms.incrementAndGet();
    assertThat(limiter.tryAcquire(to("r", 102))).as("the minute's tokens, refilled by the given clock").isTrue();
  }

  @Test
  void refundsTheRecipientsTokenWhenTheContentRefuses() {
    AtomicLong ms = new AtomicLong(1_800_000_000_000L);
    Bucket4jLimiter limiter = new Bucket4jLimiter(ms::get);
    for (int i = 0; i < SeedPolicy.SAME_CONTENT_59S; i++) {
      assertThat(limiter.tryAcquire(to("r", 0))).isTrue();
    }
    for (int i = 0; i < 20; i++) {
      assertThat(limiter.tryAcquire(to("r", 0))).as("the same content, over its limit").isFalse();
    }
    int admitted = SeedPolicy.SAME_CONTENT_59S;
    for (int i = 1; admitted < SeedPolicy.PER_MINUTE; i++, admitted++) {
      assertThat(limiter.tryAcquire(to("r", i))).as("refused contents took none of the minute's tokens").isTrue();
    }
    assertThat(limiter.tryAcquire(to("r", 999))).isFalse();
  }
}
