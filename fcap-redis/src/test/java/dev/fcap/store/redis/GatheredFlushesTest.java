package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The held flush on a channel whose clock the test moves ({@link EmbeddedChannel#freezeTime}): what
 * is written and flushed leaves only when the delay since the first held flush has passed, all of
 * it at once; a full hold, a close and a disconnect let it go at once.
 */
class GatheredFlushesTest {
  private static final long DELAY_US = 200;

  private static EmbeddedChannel channel() {
    EmbeddedChannel channel = new EmbeddedChannel();
    channel.freezeTime();
    channel.pipeline().addFirst(new GatheredFlushes(TimeUnit.MICROSECONDS.toNanos(DELAY_US)));
    return channel;
  }

  @Test
  void callsFlushedWithinTheDelayLeaveTogetherWhenItEnds() {
    EmbeddedChannel channel = channel();
    channel.writeAndFlush("a");
    channel.advanceTimeBy(DELAY_US - 1, TimeUnit.MICROSECONDS);
    channel.writeAndFlush("b");
    channel.runPendingTasks();
    assertThat(channel.outboundMessages()).as("held until the delay has passed").isEmpty();
    channel.advanceTimeBy(1, TimeUnit.MICROSECONDS);
    channel.runPendingTasks();
    assertThat(channel.outboundMessages()).containsExactly("a", "b");
    channel.outboundMessages().clear();

    channel.writeAndFlush("c"); // the next flush starts a new delay, from its own time
    channel.advanceTimeBy(DELAY_US - 1, TimeUnit.MICROSECONDS);
    channel.runPendingTasks();
    assertThat(channel.outboundMessages()).isEmpty();
    channel.advanceTimeBy(1, TimeUnit.MICROSECONDS);
    channel.runPendingTasks();
    assertThat(channel.outboundMessages()).containsExactly("c");
  }

  @Test
  void aFullHoldLeavesAtOnce() {
    EmbeddedChannel channel = channel();
    for (int i = 0; i < GatheredFlushes.MAX_HELD - 1; i++) {
      channel.writeAndFlush(i);
    }
    assertThat(channel.outboundMessages()).isEmpty();
    channel.writeAndFlush("last");
    assertThat(channel.outboundMessages()).hasSize(GatheredFlushes.MAX_HELD);
    channel.advanceTimeBy(DELAY_US, TimeUnit.MICROSECONDS);
    channel.runPendingTasks();
    assertThat(channel.outboundMessages()).as("the cancelled flush sends nothing twice").hasSize(GatheredFlushes.MAX_HELD);
  }

  @Test
  void aCloseSendsWhatIsHeldFirst() {
    EmbeddedChannel channel = channel();
    channel.writeAndFlush("held");
    channel.close();
    assertThat(channel.outboundMessages()).containsExactly("held");
    EmbeddedChannel other = channel();
    other.writeAndFlush("held");
    other.disconnect();
    assertThat(other.outboundMessages()).containsExactly("held");
  }
}
