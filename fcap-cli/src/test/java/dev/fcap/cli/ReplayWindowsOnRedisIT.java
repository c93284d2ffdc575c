package dev.fcap.cli;

import dev.fcap.store.redis.testing.RedisExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReplayWindowsOracleTest} on Redis, standalone and a 3-master cluster (real processes): a log
 * with a {@code timeZone} column replayed with send windows and local day, week and month caps, one
 * row at a time and with every recipient's chain of rows in flight at once, must write the oracle's
 * decisions row by row; and a log of deferred rows must write the deferral oracle's, booking for booking.
 */
class ReplayWindowsOnRedisIT {
  @RegisterExtension static final RedisExtension STANDALONE = RedisExtension.standalone();
  @RegisterExtension static final RedisExtension CLUSTER = RedisExtension.cluster();
  private static final int QUIET_HOURS_ROWS = 30_000;
  private static final int RANDOM_ROWS = 12_000;
  @TempDir Path dir;

  @Test
  void quietHoursAndLocalCapsOnStandalone() throws IOException {
    quietHours(STANDALONE.uri());
  }

  @Test
  void quietHoursAndLocalCapsOnCluster() throws IOException {
    quietHours(CLUSTER.uri());
  }

  @Test
  void randomWindowsAndCalendarsOnStandaloneAndCluster() throws IOException {
    Path rules = Files.writeString(dir.resolve("rules.yaml"), ReplayWindowsOracleTest.randomWindowsYaml(56));
    var expected = ReplayWindowsOracleTest.logAndOracle(rules, dir.resolve("log.csv"), 256, RANDOM_ROWS);
    for (String uri : new String[] {STANDALONE.uri(), CLUSTER.uri()}) {
      ReplayWindowsOracleTest.assertReplayMatches(expected, 1, uri);
      ReplayWindowsOracleTest.assertReplayMatches(expected, 2, uri);
    }
  }

  /** {@link ReplayDeferralOracleTest}'s deferred rows: booked in the script as the oracle books them. */
  @Test
  void deferredRowsOnStandaloneAndCluster() throws IOException {
    for (long seed : new long[] {29}) {
      var expected = ReplayDeferralOracleTest.logAndOracle(dir, seed, 2_000);
      for (String uri : new String[] {STANDALONE.uri(), CLUSTER.uri()}) {
        ReplayWindowsOracleTest.assertReplayMatches(expected, 1, uri);
        ReplayWindowsOracleTest.assertReplayMatches(expected, 2, uri);
      }
    }
  }

  private void quietHours(String uri) throws IOException {
    Path rules = Files.writeString(dir.resolve("rules.yaml"), ReplayWindowsOracleTest.QUIET_HOURS);
    var expected = ReplayWindowsOracleTest.logAndOracle(rules, dir.resolve("log.csv"), 31, QUIET_HOURS_ROWS);
    expected.assertCovers("quiet-hours", "per-local-day", "per-local-week", "per-local-month", "per-minute");
    ReplayWindowsOracleTest.assertReplayMatches(expected, 1, uri);
    ReplayWindowsOracleTest.assertReplayMatches(expected, 2, uri);
  }
}
