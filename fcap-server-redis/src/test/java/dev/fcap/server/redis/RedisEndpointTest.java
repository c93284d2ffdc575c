package dev.fcap.server.redis;

import dev.fcap.store.redis.RedisUris;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;

class RedisEndpointTest {

  @Test
  void takesOutOnlyFcapParametersAndKeepsLettucesAndTheFragment() {
    RedisEndpoint e = RedisEndpoint.parse("rules.source",
        "redis-sentinel://:secret@10.0.0.1:26379,10.0.0.2:26379/2?timeout=5s&key=prod%3Arules#mymaster", Set.of("key"));
    assertThat(e.param("key", "x")).isEqualTo("prod:rules");
    assertThat(e.uri()).isEqualTo("redis-sentinel://:secret@10.0.0.1:26379,10.0.0.2:26379/2?timeout=5s#mymaster");
    assertThat(e.redacted()).doesNotContain("secret");
    assertThat(RedisUris.parse(e.uri()).cluster()).isFalse();
  }

  /** Passwords are written raw: their ? and # are not the URI's query and fragment. */
  @Test
  void aPasswordsQuestionMarkAndHashAreNotTheQuery() {
    RedisEndpoint e = RedisEndpoint.parse("store.uri", "redis://default:hunt?er#2/x@127.0.0.1:6379/0?prefix=p:",
        Set.of("prefix"));
    assertThat(e.param("prefix", "fc:")).isEqualTo("p:");
    assertThat(e.uri()).isEqualTo("redis://default:hunt?er#2/x@127.0.0.1:6379/0");
    var node = RedisUris.parse(e.uri()).nodes().get(0);
    assertThat(node.getPort()).isEqualTo(6379);
    assertThat(new String(node.getCredentialsProvider().resolveCredentials().block().getPassword()))
        .isEqualTo("hunt?er#2/x");
  }

  @Test
  void clusterUriWithoutParametersIsUnchanged() {
    RedisEndpoint e = RedisEndpoint.parse("audit.sink", "redis-cluster://h1:7000,h2:7001?stream=s&maxlen=500",
        Set.of("stream", "maxlen"));
    assertThat(e.uri()).isEqualTo("redis-cluster://h1:7000,h2:7001");
    assertThat(RedisUris.parse(e.uri()).cluster()).isTrue();
    assertThat(e.param("stream", "fcap:audit")).isEqualTo("s");
    assertThat(e.longParam("maxlen", 7, 1)).isEqualTo(500);
    assertThat(e.longParam("other", 7, 1)).isEqualTo(7);
  }

  @Test
  void handlesOnlyRedisSchemes() {
    assertThat(RedisEndpoint.handles("redis://localhost")).isTrue();
    assertThat(RedisEndpoint.handles("rediss-cluster://h:1")).isTrue();
    assertThat(RedisEndpoint.handles("memory")).isFalse();
    assertThat(RedisEndpoint.handles("file:/tmp/x")).isFalse();
    assertThat(RedisEndpoint.handles("postgres://db")).isFalse();
  }

  @Test
  void badParametersAreRefusedNamingTheSetting() {
    assertThatThrownBy(() -> RedisEndpoint.parse("store.uri", "redis://h?key=x", Set.of("prefix")))
        .hasMessage("store.uri: 'key' is not a parameter of this setting (it takes prefix)");
    assertThatThrownBy(() -> RedisEndpoint.parse("rules.source", "redis://h?key=", Set.of("key")))
        .hasMessageContaining("rules.source: the parameter 'key' needs a value");
    RedisEndpoint e = RedisEndpoint.parse("audit.sink", "redis://h?maxlen=0", Set.of("maxlen"));
    assertThatThrownBy(() -> e.longParam("maxlen", 1, 1)).hasMessage("audit.sink: maxlen must be at least 1, got 0");
  }

  /** A bad {@code ?groups=} or {@code ?flushDelayMicros=} is refused before connecting, naming the setting and what it takes. */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
      "groups=-1|store.uri: groups must be at least 0, got -1",
      "groups=x|store.uri: groups must be an integer, got 'x'",
      "groups=3000000000|store.uri: groups must be at most 2147483647, got 3000000000",
      "flushDelayMicros=-1|store.uri: flushDelayMicros must be at least 0, got -1",
      "flushDelayMicros=1ms|store.uri: flushDelayMicros must be an integer, got '1ms'",
      "flushDelayMicros=10001|store.uri: flushDelayMicros must be at most 10000 (10 ms), got 10001"})
  void aBadStoreParameterIsRefused(String parameter, String message) {
    dev.fcap.server.ServerConfig config = dev.fcap.server.ConfigLoader.load(null, java.util.Map.of(),
        java.util.Map.of("store.uri", "redis://127.0.0.1:1?" + parameter, "store.timeout", "100ms"));
    assertThatThrownBy(() -> new RedisStoreProvider().open(config.storeUri(), dev.fcap.time.Clock.system(), config))
        .isInstanceOf(IllegalArgumentException.class).hasMessage(message);
  }

  /**
   * A password such as {@code redis://default:hunt/er2@127.0.0.1:1} is never echoed in the invalid-URI
   * error. Each character operators put in passwords is tried through the store provider, which is what
   * {@code fcap serve} reports.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"hunt/er2", "hunt@er2", "hunt:er2", "hunt?er2",
      "hunt#er2", "hunt%er2"})
  void aStoreUriNeverEchoesItsPassword(String password) {
    dev.fcap.server.ServerConfig config = dev.fcap.server.ConfigLoader.load(null, java.util.Map.of(),
        java.util.Map.of("store.uri", "redis://default:" + password + "@127.0.0.1:1", "store.timeout", "100ms"));
    Throwable t = org.assertj.core.api.Assertions.catchThrowable(() ->
        new RedisStoreProvider().open(config.storeUri(), dev.fcap.time.Clock.system(), config));
    assertThat(t).isNotNull();
    for (Throwable c = t; c != null; c = c.getCause()) {
      assertThat(String.valueOf(c.getMessage())).as(c.getClass().getName()).doesNotContain(password);
    }
  }
}
