package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedisUrisTest {
  @Test
  void standaloneWithPasswordAndDatabase() {
    RedisUris.Target t = RedisUris.parse("redis://:secret@127.0.0.1:6380/3");
    assertThat(t.cluster()).isFalse();
    RedisURI u = t.nodes().get(0);
    assertThat(u.getPort()).isEqualTo(6380);
    assertThat(u.getDatabase()).isEqualTo(3);
    assertThat(new String(u.getCredentialsProvider().resolveCredentials().block().getPassword())).isEqualTo("secret");
  }

  @Test
  void tlsAndSentinel() {
    assertThat(RedisUris.parse("rediss://h:6390").nodes().get(0).isSsl()).isTrue();
    RedisURI s = RedisUris.parse("redis-sentinel://127.0.0.1:26379,127.0.0.1:26380/2#mymaster").nodes().get(0);
    assertThat(s.getSentinels()).hasSize(2);
    assertThat(s.getSentinelMasterId()).isEqualTo("mymaster");
    assertThat(s.getDatabase()).isEqualTo(2);
  }

  @Test
  void clusterSeedList() {
    RedisUris.Target t = RedisUris.parse("redis-cluster://user:p%40ss@10.0.0.1:7000,10.0.0.2:7001");
    assertThat(t.cluster()).isTrue();
    assertThat(t.nodes()).extracting(RedisURI::getHost).containsExactly("10.0.0.1", "10.0.0.2");
    assertThat(t.nodes()).extracting(RedisURI::getPort).containsExactly(7000, 7001);
    var credentials = t.nodes().get(1).getCredentialsProvider().resolveCredentials().block();
    assertThat(credentials.getUsername()).isEqualTo("user");
    assertThat(new String(credentials.getPassword())).isEqualTo("p@ss");
    assertThat(RedisUris.parse("rediss-cluster://h:1").nodes().get(0).isSsl()).isTrue();
  }

  @Test
  void badUrisSayWhatToFixAndHideThePassword() {
    assertThatThrownBy(() -> RedisUris.parse("localhost:6379")).hasMessageContaining("scheme://");
    assertThatThrownBy(() -> RedisUris.parse("memcached://h:1")).hasMessageContaining("unknown scheme 'memcached'");
    assertThatThrownBy(() -> RedisUris.parse("redis-cluster://:pw@h:1/2")).hasMessageContaining("no database")
        .hasMessageNotContaining("pw@");
    assertThatThrownBy(() -> RedisUris.parse("redis-cluster://h:x")).hasMessageContaining("bad port");
    assertThatThrownBy(() -> RedisUris.parse("redis-cluster://h:1,,h:2")).hasMessageContaining("empty host");
  }

  /** Passwords are written raw: a URI delimiter in one is part of the password, not of the address. */
  @Test
  void aRawPasswordMayHoldUriDelimiters() {
    for (String password : List.of("hunt/er2", "hunt?er2", "hunt#er2", "hunt@er2", "hunt er2", "h\u00e9/2")) {
      RedisURI u = RedisUris.parse("redis://default:" + password + "@127.0.0.1:1/2").nodes().get(0);
      assertThat(u.getHost()).as(password).isEqualTo("127.0.0.1");
      assertThat(u.getPort()).as(password).isEqualTo(1);
      assertThat(u.getDatabase()).as(password).isEqualTo(2);
      var credentials = u.getCredentialsProvider().resolveCredentials().block();
      assertThat(credentials.getUsername()).isEqualTo("default");
      assertThat(new String(credentials.getPassword())).isEqualTo(password);
    }
    RedisURI encoded = RedisUris.parse("redis://:p%40ss@h:1").nodes().get(0);
    assertThat(new String(encoded.getCredentialsProvider().resolveCredentials().block().getPassword())).isEqualTo("p@ss");
    RedisURI sentinel = RedisUris.parse("redis-sentinel://:hunt/er2@127.0.0.1:26379/2#mymaster").nodes().get(0);
    assertThat(sentinel.getSentinels()).hasSize(1);
    assertThat(new String(sentinel.getCredentialsProvider().resolveCredentials().block().getPassword())).isEqualTo("hunt/er2");
  }

  /** What Lettuce cannot read is named, and no piece of the password is quoted. */
  @Test
  void aBadNumberIsNamedWithoutAnyPieceOfThePassword() {
    assertThatThrownBy(() -> RedisUris.parse("redis://default:hunt/er2@127.0.0.1:1/x"))
        .hasMessageContaining("port or database is not a number").hasMessageNotContaining("er2").hasMessageNotContaining("hunt");
  }

  /** A connection that failed for a long time still retries every second, so it follows a failover. */
  @Test
  void reconnectAttemptsAreAtMostASecondApartHoweverLongTheOutage() {
    io.lettuce.core.resource.Delay delay = RedisUris.reconnectDelay();
    for (long attempt = 1; attempt <= 64; attempt++) {
      assertThat(delay.createDelay(attempt)).as("attempt %d", attempt)
          .isLessThanOrEqualTo(RedisUris.RECONNECT_CAP).isPositive();
    }
    assertThat(io.lettuce.core.resource.Delay.exponential().createDelay(20))
        .as("what Lettuce's default would wait after 20 failed attempts").isGreaterThan(java.time.Duration.ofSeconds(10));
  }
}
