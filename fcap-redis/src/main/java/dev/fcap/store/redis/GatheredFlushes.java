package dev.fcap.store.redis;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Holds a Redis connection's flushes for up to a fixed delay, so that commands sent one by one
 * within it leave in one write and Redis reads and answers them together (docs/redis.md,
 * "Gathering calls").
 *
 * <p><b>Design.</b> A lone command costs Redis a read and a write system call of its own (about 8 us
 * on loopback, against some 12 us for the decision's script), which a pipeline shares. Lettuce flushes
 * every command as it is written; the first flush after a quiet spell instead schedules one flush
 * on the connection's event loop {@code delay} later, and the flushes until then only join it. So a
 * command waits at most {@code delay} before it leaves, and a connection busy enough to have
 * {@link #MAX_HELD} commands waiting flushes at once. Everything runs on the channel's event loop
 * (Netty calls a handler there), so the state needs no lock. A close, a disconnect or the end of
 * the channel flushes what is held first.
 */
final class GatheredFlushes extends ChannelDuplexHandler {
  /** Commands held back at most: a write of this many goes at once, as a pipeline would. */
  static final int MAX_HELD = 256;
  private final long delayNanos;
  private int held;
  private ScheduledFuture<?> scheduled;

  GatheredFlushes(long delayNanos) {
    this.delayNanos = delayNanos;
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    held++;
    ctx.write(msg, promise);
  }

  @Override
  public void flush(ChannelHandlerContext ctx) {
    if (held >= MAX_HELD) {
      flushNow(ctx);
    } else if (scheduled == null) {
      scheduled = ctx.executor().schedule(() -> flushNow(ctx), delayNanos, TimeUnit.NANOSECONDS);
    }
  }

  private void flushNow(ChannelHandlerContext ctx) {
    release();
    ctx.flush();
  }

  /** Nothing is held any more: the scheduled flush, if any, is cancelled. */
  private void release() {
    if (scheduled != null) {
      scheduled.cancel(false);
      scheduled = null;
    }
    held = 0;
  }

  @Override
  public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
    flushNow(ctx);
    ctx.close(promise);
  }

  @Override
  public void disconnect(ChannelHandlerContext ctx, ChannelPromise promise) {
    flushNow(ctx);
    ctx.disconnect(promise);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    release(); // what was held is failed by Lettuce with the connection
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    if (held > 0) {
      flushNow(ctx);
    }
  }
}
