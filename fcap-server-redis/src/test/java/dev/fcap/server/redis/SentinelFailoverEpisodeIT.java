package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.server.redis.OutageEpisodesIT.Load;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A Sentinel failover under load, counting every admission per recipient over the whole episode: a
 * master, a replica and a sentinel on loopback; the master is killed (SIGKILL) while three callers
 * decide; the sentinel promotes the replica; the old master comes back and is made the new master's
 * replica. The store acknowledges a write only once a replica has it ({@code replicaAcks=1}), so:
 *
 * <ul>
 *   <li>the bound is the failure policy's: per recipient, the store's limit plus one limit of this
 *       node's outage store, never more once the store is back (the outage's admissions are written
 *       back to the promoted master);
 *   <li>the promoted master, alone, acknowledges no write: the node stays degraded (its write-back
 *       fails) until a replica is attached again, then writes back and decides on the store;
 *   <li>nothing the store acknowledged before the kill is lost: the promoted master counts at least
 *       every admission of each recipient.
 * </ul>
 *
 * Every wait polls a condition (the sentinel's answer, {@code INFO replication}, the node's state)
 * with a deadline. The measurement of what asynchronous replication loses over many failovers is
 * {@code SentinelLostAdmissionsIT} (on demand).
 */
class SentinelFailoverEpisodeIT {

  @Test
  void masterKilledUnderLoadWithReplicaAcks() throws Exception {
    Path seed = Files.createTempFile("fcap-failover", ".yaml");
    Files.writeString(seed, """
        policies:
          - tenant: default
            rules:
              - {id: per-hour, limit: 15, window: 1h, key: [recipient]}
        """);
    try (RedisDeployment d = RedisDeployment.start(RedisDeployment.Kind.SENTINEL)) {
      RedisServer master = d.servers().get(0);
      RedisServer replica = d.servers().get(1);
      RedisServer sentinel = d.servers().get(2);
      String uri = d.uri();
      int fragment = uri.indexOf('#');
      String storeUri = uri.substring(0, fragment) + "?replicaAcks=1&replicaAckTimeout=100ms" + uri.substring(fragment);
      Map<String, String> settings = Map.of("store.uri", storeUri, "store.timeout", "200ms",
          "failure.window", "500ms", "failure.probeInterval", "100ms", "rules.seed", seed.toString());
      try (Node node = Node.onRedis(uri, "failover:rules", "failover:audit", settings);
          Load load = new Load(node, "failover-r")) {
        OutageEpisodesIT.await("decisions on Redis", () -> load.storeDecided.get() > 100);
        master.kill();
        OutageEpisodesIT.await("degraded decisions", () -> load.degraded.get() > 100);
        assertThat(node.server.failover().down()).isTrue();
        OutageEpisodesIT.await("the sentinel to name the replica as master",
            () -> masterPort(sentinel) == replica.port());
        OutageEpisodesIT.await("the replica to be promoted", () -> "master".equals(info(replica, "replication", "role")));
        // alone, the promoted master acknowledges no write: the write-back reaches it (its WAIT is the
        // first this server ever ran: a replica is never sent one), the WAIT fails, the node stays degraded
        OutageEpisodesIT.await("the write-back to reach the promoted master", () -> info(replica, "commandstats",
            "cmdstat_wait") != null);
        assertThat(node.server.failover().down()).as("no replica acknowledged the write-back").isTrue();

        master.restart();
        master.call("REPLICAOF", "127.0.0.1", Integer.toString(replica.port())); // as the sentinel would, sooner
        OutageEpisodesIT.await("the old master to replicate the new one",
            () -> "up".equals(info(master, "replication", "master_link_status")));
        OutageEpisodesIT.await("recovery", () -> !node.server.failover().down());
        int back = load.storeDecided.get();
        OutageEpisodesIT.await("decisions on the promoted master", () -> load.storeDecided.get() > back + 100);
        Map<String, Integer> counts = load.endWithinTheFailurePolicysBound(node, "Sentinel failover");
        for (String r : counts.keySet()) {
          long used = Load.usedAfterTheEpisode(node, r);
          assertThat(used).as("the promoted master counts every admission of %s (acknowledged by the replica, "
              + "or written back)", r).isGreaterThanOrEqualTo(counts.get(r));
        }
      }
    } finally {
      Files.deleteIfExists(seed);
    }
  }

  private static int masterPort(RedisServer sentinel) {
    try {
      Object addr = sentinel.call("SENTINEL", "get-master-addr-by-name", RedisDeployment.SENTINEL_MASTER);
      return addr instanceof List<?> l && l.size() == 2 ? Integer.parseInt(String.valueOf(l.get(1))) : -1;
    } catch (java.io.IOException e) {
      return -1;
    }
  }

  private static String info(RedisServer s, String section, String field) {
    try {
      return s.info(section, field);
    } catch (java.io.IOException e) {
      return null;
    }
  }
}
