package dev.fcap.server;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A process that can no longer decide correctly stops: the death of one of fcap's own threads (named
 * {@code fcap-*}: the journal flusher and snapshotter, the rules watcher, the audit writer, the
 * scheduler that runs the failover probes and the write-back), or an {@link Error} on any thread,
 * logs what died and why and exits with {@link #EXIT_STATUS}, so a supervisor restarts the process and
 * the journal recovers what it holds. A server that kept answering after its journal thread died
 * would acknowledge admissions it never writes. {@code OutOfMemoryError} is stopped earlier by the
 * JVM itself: the launcher passes {@code -XX:+ExitOnOutOfMemoryError}, as one caught and swallowed
 * would never reach a handler.
 *
 * <p>{@link #install} is for a process that is an fcap server ({@code fcap serve}); an application
 * that embeds the server keeps its own handler. Tests pass a {@link Halt} that records the call.
 */
public final class FatalErrors {
  private static final Logger LOG = LoggerFactory.getLogger(FatalErrors.class);
  /** The exit status of a process stopped by a fatal error (sysexits' EX_SOFTWARE). */
  public static final int EXIT_STATUS = 70;
  /** How long the shutdown hooks (the graceful stop, which flushes the journal) get before a halt. */
  static final Duration EXIT_GRACE = Duration.ofSeconds(10);

  /** Ends the process; injected so tests can observe it. */
  @FunctionalInterface
  public interface Halt {
    void halt(int status, String why);

    /**
     * {@code System.exit}: the graceful stop writes what the journal holds; a stop that hangs (it may
     * need what broke) is cut short by {@code Runtime.halt} after {@link #EXIT_GRACE}.
     */
    Halt EXIT = (status, why) -> {
      Thread watchdog = new Thread(() -> {
        try {
          Thread.sleep(EXIT_GRACE.toMillis()); // the bound of the graceful stop, not a wait for a condition
        } catch (InterruptedException e) {
          return;
        }
        Runtime.getRuntime().halt(status);
      }, "fcap-exit-watchdog");
      watchdog.setDaemon(true);
      watchdog.start();
      System.exit(status);
    };
  }

  private FatalErrors() {}

  /** Makes {@link #handler} the process's default uncaught-exception handler. */
  public static void install(Halt halt) {
    Thread.setDefaultUncaughtExceptionHandler(handler(halt));
  }

  /** Halts for a death of an {@code fcap-*} thread or any {@link Error}; other deaths are logged. */
  public static Thread.UncaughtExceptionHandler handler(Halt halt) {
    return (thread, error) -> {
      if (isFatal(thread, error)) {
        String why = "thread " + thread.getName() + " died of " + error + "; exiting (status " + EXIT_STATUS
            + ") so that a supervisor restarts fcap and the journal recovers";
        LOG.error(why, error);
        halt.halt(EXIT_STATUS, why);
      } else {
        LOG.error("thread {} died", thread.getName(), error);
      }
    };
  }

  static boolean isFatal(Thread thread, Throwable error) {
    return error instanceof Error || thread.getName().startsWith("fcap-");
  }

  /**
   * A one-thread scheduler named {@code name} whose tasks' failures reach the uncaught-exception
   * handler, as a thread's death would. Its tasks are fcap's own work (deadlines, failover probes, the
   * write-back), which hand the store's errors on through futures and never throw: one that threw left
   * its work undone (a probe that threw schedules no next probe, and an outage would never end). A
   * plain scheduler keeps the failure in the task's future, where nobody looks.
   */
  static ScheduledThreadPoolExecutor scheduler(String name) {
    ThreadFactory threads = r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
    return new ScheduledThreadPoolExecutor(1, threads) {
      @Override
      protected void afterExecute(Runnable r, Throwable thrown) {
        super.afterExecute(r, thrown);
        Throwable failure = thrown != null ? thrown : failureOf(r);
        if (failure != null) {
          Thread t = Thread.currentThread();
          t.getUncaughtExceptionHandler().uncaughtException(t, failure);
        }
      }
    };
  }

  private static Throwable failureOf(Runnable r) {
    if (!(r instanceof Future<?> f) || !f.isDone() || f.isCancelled()) {
      return null;
    }
    try {
      f.get();
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (CancellationException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }
}
