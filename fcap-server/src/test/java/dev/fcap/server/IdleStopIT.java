package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.net.Socket;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * An idle server stops without a fixed wait: with nothing in flight, close() returns well before the
 * 2 s quiet period that Netty's default stop of the accepting loop would add (the bound is that wait,
 * not a performance target).
 */
class IdleStopIT {
  private static final long NETTY_DEFAULT_QUIET_PERIOD_MS = 2_000;

  @Test
  void idleServerStopsWithoutTheQuietPeriod() {
    TestServer s = TestServer.start(null, Map.of());
    assertThat(s.post("/v1/decisions", "{\"recipient\": \"+15550030\"}").status()).isEqualTo(200);
    int port = s.server.port();
    long start = System.nanoTime();
    s.close();
    long stoppedMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(stoppedMs).as("ms to stop an idle server").isLessThan(NETTY_DEFAULT_QUIET_PERIOD_MS);
    assertThatThrownBy(() -> new Socket("127.0.0.1", port).close()).as("the port is closed")
        .isInstanceOf(ConnectException.class);
  }
}
