package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.redis.testing.RedisExtension;
import dev.fcap.store.redis.testing.RedisServer;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store's identity keys on real Redis processes: written on first connect, one per master in a
 * cluster, and a check that tells a Redis that lost its data (here flushed: the key is gone either way)
 * from one that did not, once per loss, on every node that shares the store.
 */
class RedisIdentityIT {
  @RegisterExtension
  static final RedisExtension STANDALONE = RedisExtension.standalone();
  @RegisterExtension
  static final RedisExtension CLUSTER = RedisExtension.cluster();

  @Test
  void aLostIdentityIsReportedOncePerNode() throws Exception {
    RedisServer redis = STANDALONE.deployment().servers().get(0);
    String uri = STANDALONE.uri();
    try (RedisStore one = RedisStore.builder(uri).keyPrefix("id1:").build();
        RedisStore two = RedisStore.builder(uri).keyPrefix("id1:").build()) {
      assertThat(redis.call("EXISTS", "id1:identity")).as("written on first connect").isEqualTo(1L);
      assertThat(redis.call("PTTL", "id1:identity")).as("without expiry").isEqualTo(-1L);
      assertThat(one.keepsIdentity()).isTrue();
      assertThat(one.checkIdentity().join()).isEmpty();
      assertThat(two.checkIdentity().join()).isEmpty();

      redis.call("FLUSHALL");
      Optional<String> first = one.checkIdentity().join();
      assertThat(first).hasValueSatisfying(why -> assertThat(why).contains("id1:identity").contains("missing"));
      assertThat(one.checkIdentity().join()).as("written anew: reported once").isEmpty();
      assertThat(two.checkIdentity().join()).as("the other node finds the new identity: a loss for it too")
          .hasValueSatisfying(why -> assertThat(why).contains("another node wrote a new identity first"));
      assertThat(two.checkIdentity().join()).isEmpty();
    }
  }

  @Test
  void aClusterHasAnIdentityKeyOnEveryMasterAndALossOfOneIsSeen() throws Exception {
    List<RedisServer> masters = CLUSTER.deployment().masters();
    assertThat(masters).hasSizeGreaterThan(1);
    try (RedisStore store = RedisStore.builder(CLUSTER.uri()).keyPrefix("id2:").build()) {
      for (RedisServer m : masters) {
        assertThat((List<?>) m.call("KEYS", "id2:identity*")).as("one identity key on each master").hasSize(1);
      }
      assertThat(store.checkIdentity().join()).isEmpty();
      RedisServer lost = masters.get(1);
      String key = (String) ((List<?>) lost.call("KEYS", "id2:identity*")).get(0);
      lost.call("FLUSHALL");
      assertThat(store.checkIdentity().join()).as("one master lost its data")
          .hasValueSatisfying(why -> assertThat(why).contains(key).contains("missing").doesNotContain("; "));
      assertThat(store.checkIdentity().join()).isEmpty();
    }
  }
}
