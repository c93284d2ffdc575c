package dev.fcap.server;

import com.linecorp.armeria.common.Flags;
import com.linecorp.armeria.common.util.TransportType;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The event loop that accepts connections on the server's port, stopping at once. Armeria stops its
 * accepting loops with Netty's default graceful stop, which waits a fixed 2 s quiet period for tasks
 * that never come (the port is closed by then), so an idle server took over 2 s to exit on SIGTERM.
 * Draining in-flight requests is Armeria's graceful shutdown ({@code shutdown.grace}), not this loop's.
 */
final class PromptBossGroup extends MultiThreadIoEventLoopGroup {
  private static final long STOP_TIMEOUT_SECONDS = 15;

  PromptBossGroup(String port) {
    super(1, new DefaultThreadFactory("armeria-boss-" + port, false), handlers());
  }

  /** The transport of Armeria's worker loops, which the accepted connections are handed to. */
  private static IoHandlerFactory handlers() {
    return Flags.transportType() == TransportType.EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
  }

  @Override
  public Future<?> shutdownGracefully() {
    return shutdownGracefully(0, STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
  }
}
