package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Stores plug in through {@link StoreProvider} and ServiceLoader; an unknown URI is refused clearly. */
class StoreProviderIT {

  @Test
  void aProviderOnTheClassPathOpensItsStore() {
    int before = TestStoreProvider.OPENED.get();
    try (TestServer s = TestServer.start(null, Map.of("store.uri", "test-memory://one"))) {
      assertThat(TestStoreProvider.OPENED.get()).isEqualTo(before + 1);
      assertThat(s.decide("{\"recipient\": \"p\"}").body().get("allowed").asBoolean()).isTrue();
      assertThat(s.server.describe()).contains("store: test-memory://one");
    }
  }

  @Test
  void unknownStoreAndRulesUrisAreRefused() {
    assertThatThrownBy(() -> TestServer.start(null, Map.of("store.uri", "nope://x")))
        .hasMessageContaining("store.uri").hasMessageContaining("nope://x");
    assertThatThrownBy(() -> TestServer.start(null, Map.of("rules.source", "redis://127.0.0.1:6379")))
        .hasMessageContaining("rules.source");
  }
}
