package dev.fcap.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ClientOptionsTest {

  @Test
  void defaultsAreThePublicConstants() {
    ClientOptions o = ClientOptions.create("http://127.0.0.1:8080/");
    assertThat(o.uri().toString()).isEqualTo("http://127.0.0.1:8080");
    assertThat(o.apiKey()).isNull();
    assertThat(o.connectTimeout()).isEqualTo(ClientOptions.DEFAULT_CONNECT_TIMEOUT);
    assertThat(o.requestTimeout()).isEqualTo(ClientOptions.DEFAULT_REQUEST_TIMEOUT);
    assertThat(o.maxAttempts()).isEqualTo(ClientOptions.DEFAULT_MAX_ATTEMPTS);
    assertThat(o.retryBackoff()).isEqualTo(ClientOptions.DEFAULT_RETRY_BACKOFF);
    assertThat(o.maxRetryBackoff()).isEqualTo(ClientOptions.DEFAULT_MAX_RETRY_BACKOFF);
    assertThat(o.fallback()).isSameAs(ClientOptions.DEFAULT_FALLBACK);
    assertThat(o.generateMessageIds()).isEqualTo(ClientOptions.DEFAULT_GENERATE_MESSAGE_IDS);
    assertThat(o.messageIds().get()).isNotEqualTo(o.messageIds().get());
  }

  @Test
  void mutateCopiesAndLeavesTheOriginalAlone() {
    ClientOptions a = ClientOptions.builder("http://h:1").apiKey("k").maxAttempts(7).build();
    ClientOptions b = a.mutate().requestTimeout(Duration.ofSeconds(3)).build();
    assertThat(b.apiKey()).isEqualTo("k");
    assertThat(b.maxAttempts()).isEqualTo(7);
    assertThat(b.requestTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(a.requestTimeout()).isEqualTo(ClientOptions.DEFAULT_REQUEST_TIMEOUT);
    assertThat(a.toString()).doesNotContain("k,").contains("apiKey=***");
  }

  @Test
  void badSettingsSayWhatToFix() {
    assertThatThrownBy(() -> ClientOptions.builder("localhost:8080")).hasMessageContaining("http://host:port");
    assertThatThrownBy(() -> ClientOptions.builder("http://h:1").maxAttempts(0)).hasMessageContaining("maxAttempts");
    assertThatThrownBy(() -> ClientOptions.builder("http://h:1").requestTimeout(Duration.ZERO))
        .hasMessageContaining("requestTimeout");
    assertThatThrownBy(() -> Message.builder("r").cost(0)).hasMessageContaining("cost");
  }

  @Test
  void anyIdIsOnePathSegment() {
    assertThat(FcapClient.segment("+86 138/00?x=1&é")).isEqualTo("%2B86%20138%2F00%3Fx%3D1%26%C3%A9");
    assertThat(FcapClient.segment("a-b.c_d~e")).isEqualTo("a-b.c_d~e");
  }
}
