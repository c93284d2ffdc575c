package dev.fcap.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.redis.testing.RedisExtension;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The grouped layout's advice on Redis's {@code hash-max-listpack-value}, read from a real Redis. */
class ListpackAdviceIT {
  @RegisterExtension
  static final RedisExtension REDIS = RedisExtension.standalone();

  private static java.util.Optional<String> advice() {
    try (RedisEndpoint.Link link = RedisEndpoint.parse("store.uri", REDIS.uri(), Set.of())
        .connect(Duration.ofSeconds(2), Duration.ofSeconds(2))) {
      return RedisStoreProvider.listpackWarning(link);
    }
  }

  @Test
  void adviseTheSettingOnlyWhileItIsBelowFcapsValues() throws Exception {
    var server = REDIS.deployment().servers().get(0);
    try {
      server.call("CONFIG", "SET", "hash-max-listpack-value", "64"); // Redis's default
      assertThat(advice()).hasValueSatisfying(a -> assertThat(a).contains("hash-max-listpack-value 64")
          .contains("CONFIG SET hash-max-listpack-value 512"));
      server.call("CONFIG", "SET", "hash-max-listpack-value", "511");
      assertThat(advice()).isPresent();
      server.call("CONFIG", "SET", "hash-max-listpack-value", "512");
      assertThat(advice()).isEmpty();
      server.call("CONFIG", "SET", "hash-max-listpack-value", "4096");
      assertThat(advice()).isEmpty();
    } finally {
      server.call("CONFIG", "SET", "hash-max-listpack-value", "64");
    }
  }

  @Test
  void noAdviceWhereConfigIsRefused() throws Exception {
    var server = REDIS.deployment().servers().get(0);
    try {
      server.call("CONFIG", "SET", "hash-max-listpack-value", "64");
      server.call("ACL", "SETUSER", "default", "-config"); // as managed services do
      assertThat(advice()).isEmpty();
    } finally {
      server.call("ACL", "SETUSER", "default", "+config");
    }
  }
}
