package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.server.audit.AuditLog;
import dev.fcap.server.audit.AuditSink;
import dev.fcap.server.audit.RecentDenials;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A process that can no longer decide correctly stops: each way one of fcap's threads dies reaches
 * the halt, observed here instead of ending the test JVM.
 */
class FatalErrorsTest {
  private final List<String> halts = new CopyOnWriteArrayList<>();
  private Thread.UncaughtExceptionHandler before;

  @BeforeEach
  void installRecordingHalt() {
    before = Thread.getDefaultUncaughtExceptionHandler();
    FatalErrors.install((status, why) -> halts.add(status + " " + why));
  }

  @AfterEach
  void restore() {
    Thread.setDefaultUncaughtExceptionHandler(before);
  }

  @Test
  void anFcapThreadDyingOfAnythingOrAnyThreadDyingOfAnErrorHalts() throws Exception {
    die("fcap-rules-watch", new IllegalStateException("watch key gone"));
    die("some-library-thread", new IllegalStateException("its own business"));
    die("some-library-thread", new OutOfMemoryError("Java heap space"));
    assertThat(halts).hasSize(2);
    assertThat(halts.get(0)).startsWith("70 thread fcap-rules-watch died of java.lang.IllegalStateException");
    assertThat(halts.get(1)).contains("some-library-thread died of java.lang.OutOfMemoryError");
  }

  /** The audit writer dies of what its sink threw past its own error handling. */
  @Test
  void theAuditWriterDyingHalts() throws Exception {
    AuditSink broken = new AuditSink() {
      @Override
      public void write(List<dev.fcap.server.audit.AuditEvent> events) {
        throw new StackOverflowError("a sink that recursed");
      }

      @Override
      public void close() {}
    };
    AuditLog audit = new AuditLog(broken, 1.0, 16, new RecentDenials(1, 1));
    try {
      audit.admin("rules", 0, "default", null, 1, "test", "replace");
      awaitHalt();
      assertThat(halts.get(0)).contains("fcap-audit-writer died of java.lang.StackOverflowError");
    } finally {
      audit.close();
    }
  }

  /**
   * A scheduler task that threw left its work undone (a probe that threw schedules no next probe):
   * the scheduler thread reports it as a death; a cancelled task is no failure.
   */
  @Test
  void aSchedulerTaskThatThrewHaltsACancelledOneDoesNot() throws Exception {
    ScheduledThreadPoolExecutor scheduler = FatalErrors.scheduler("fcap-scheduler");
    try {
      scheduler.schedule(() -> { }, 1, TimeUnit.HOURS).cancel(false);
      scheduler.schedule(() -> {
        throw new IllegalStateException("probe failed");
      }, 0, TimeUnit.MILLISECONDS);
      awaitHalt();
      assertThat(halts).hasSize(1);
      assertThat(halts.get(0)).contains("fcap-scheduler died of java.lang.IllegalStateException: probe failed");
    } finally {
      scheduler.shutdownNow();
    }
  }

  /** A store the heap cannot hold is refused at start, with the numbers. */
  @Test
  void aStoreLargerThanTheHeapCanHoldIsRefusedWithTheNumbers() {
    assertThatThrownBy(() -> Backends.fitsTheHeap(2L << 30, 320L << 20))
        .isInstanceOf(ConfigLoader.ConfigException.class)
        .hasMessageContaining("store.maxBytes: 2048 MiB does not fit the heap")
        .hasMessageContaining("at most 70% of it, 224 MiB of 320 MiB (-Xmx)");
    Backends.fitsTheHeap(224L << 20, 320L << 20);
    Backends.fitsTheHeap(0, 320L << 20);
  }

  private void die(String name, Throwable error) throws InterruptedException {
    Thread t = new Thread(() -> {
      if (error instanceof RuntimeException r) {
        throw r;
      }
      throw (Error) error;
    }, name);
    t.start();
    t.join();
  }

  private void awaitHalt() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (halts.isEmpty()) {
      assertThat(System.nanoTime()).as("halted within 10 s").isLessThan(deadline);
      Thread.onSpinWait();
    }
  }
}
