package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Suppression;
import dev.fcap.store.ManualClock;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisExtension;
import dev.fcap.store.redis.testing.RedisServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link RedisSuppressionContract} on a Redis Cluster: the entry lies in its recipient partition's
 * slot, and a list whose buckets lie on every master is paged and counted whole.
 */
class RedisSuppressionClusterIT extends RedisSuppressionContract {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.cluster();

  @Override
  RedisDeployment deployment() {
    return REDIS.deployment();
  }

  @Override
  RedisStore newStore(ManualClock clock) throws Exception {
    REDIS.deployment().flushAll();
    return RedisStore.builder(REDIS.uri()).clock(clock).build();
  }

  @Test
  void aListOnEveryMasterIsPagedAndCountedWhole() throws Exception {
    try (RedisStore store = newStore(new ManualClock(System.currentTimeMillis()))) {
      SuppressionList list = store.as(SuppressionList.class).orElseThrow();
      for (int i = 0; i < 60; i++) {
        list.put("acme", new Suppression("+1777" + i, List.of(), List.of(), "STOP", "ops", 1, Suppression.NEVER));
      }
      List<RedisServer> masters = REDIS.deployment().masters();
      assertThat(masters).hasSizeGreaterThan(1);
      for (RedisServer master : masters) {
        assertThat((List<?>) master.call("KEYS", "*}S*:acme")).as("buckets on master %d", master.port()).isNotEmpty();
      }
      List<String> listed = new ArrayList<>();
      String cursor = null;
      for (int pages = 0; pages < 20; pages++) {
        List<Suppression> page = list.page("acme", cursor, 7);
        page.forEach(e -> listed.add(e.recipient()));
        if (page.size() < 7) {
          break;
        }
        cursor = page.get(page.size() - 1).recipient();
      }
      assertThat(listed).hasSize(60).doesNotHaveDuplicates().allMatch(r -> r.startsWith("+1777"));
      assertThat(list.size("acme")).isEqualTo(60);
    }
  }
}
