package dev.fcap.server.guard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A flood of warnings as a time trace on a manual clock. */
class ThrottledLogTest {
  @Test
  void oneLinePerIntervalWhateverTheFlood() {
    AtomicLong now = new AtomicLong(0);
    ThrottledLog log = new ThrottledLog(LoggerFactory.getLogger(ThrottledLogTest.class), now::get, 10_000);
    for (int i = 0; i < 1000; i++) {
      log.warn("flood " + i);
    }
    assertThat(log.lines()).isEqualTo(1);
    now.set(9_999);
    log.warn("still inside the interval");
    assertThat(log.lines()).isEqualTo(1);
    now.set(10_000);
    log.warn("next interval"); // says that 1000 were left out
    log.warn("left out");
    assertThat(log.lines()).isEqualTo(2);
    now.set(-5_000); // a clock that runs backwards writes nothing more
    log.warn("backwards");
    assertThat(log.lines()).isEqualTo(2);
  }
}
