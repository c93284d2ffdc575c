package dev.fcap.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.client.FcapClient;
import dev.fcap.client.ClientOptions;
import dev.fcap.server.ConfigLoader;
import dev.fcap.server.FcapServer;
import dev.fcap.server.auth.Authenticator;
import dev.fcap.spring.demo.SmsApplication;
import dev.fcap.spring.demo.SmsService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The "done" criterion: a new Spring Boot application with the starter and two properties
 * ({@code fcap.url}, {@code fcap.api-key}) against a real fcap server with the seed policy: its send
 * path is capped (the third identical SMS within 59 s never reaches the gateway), and the server
 * counted exactly what went out.
 */
class StarterEndToEndIT {

  private static AutoCloseable warmUp(FcapServer server, String key) {
    FcapClient.create(ClientOptions.builder(server.uri()).apiKey(key).requestTimeout(java.time.Duration.ofSeconds(30))
        .build()).check(dev.fcap.client.Message.of("warm-up"));
    return () -> { };
  }

  @Test
  void aSpringBootApplicationWithTwoPropertiesIsCappedByARealServer() throws Exception {
    Path dir = Files.createTempDirectory("fcap-starter-e2e");
    String key = "sms-platform-key";
    String keys = "[{name: sms, sha256: " + HexFormat.of().formatHex(Authenticator.sha256(key))
        + ", tenants: ['*'], roles: [decide, read]}]";
    try (FcapServer server = FcapServer.builder(ConfigLoader.load(null, Map.of(), Map.of("listen", "127.0.0.1:0",
        "rules.source", dir.resolve("rules.yaml").toString(), "audit.sink", "none", "apiKeys", keys,
        "shutdown.grace", "1s"))).start();
        // a running server is warm; a first request in a fresh JVM can take longer than a decision's timeout
        AutoCloseable warm = warmUp(server, key);
        ConfigurableApplicationContext app = new SpringApplicationBuilder(SmsApplication.class)
            .web(WebApplicationType.NONE)
            .properties("fcap.url=" + server.uri(), "fcap.api-key=" + key)
            .run()) {
      SmsService sms = app.getBean(SmsService.class);
      sms.send("+8613800000000", "Your code is 1234");
      sms.send("+8613800000000", "Your code is 1234");
      assertThatThrownBy(() -> sms.send("+8613800000000", "Your code is 1234"))
          .isInstanceOfSatisfying(MessageCappedException.class, e -> {
            assertThat(e.decision().blockedBy()).containsExactly("same-content-per-59s");
            assertThat(e.decision().retryAfterMs()).isPositive();
          });
      assertThat(sms.sentThroughTheGateway()).hasSize(2);

      FcapClient ops = FcapClient.create(ClientOptions.builder(server.uri()).apiKey(key).build());
      assertThat(ops.inspect(null, "+8613800000000").counters()).filteredOn(c -> c.rule().equals("recipient-per-day"))
          .singleElement().satisfies(c -> assertThat(c.used()).isEqualTo(2));
      assertThat(app.getBean(Fcap.class).mode()).isEqualTo("client");
      // a point-in-time probe with a 500 ms timeout: on a loaded machine one may miss, so poll (bounded)
      HealthIndicator health = app.getBean("fcapHealthIndicator", HealthIndicator.class);
      Awaitility.await("the health indicator is up").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
          .pollInSameThread().until(() -> health.health().getStatus() == Status.UP);
      assertThat(health.health().getStatus()).isEqualTo(Status.UP);
      assertThat(health.health().getDetails()).containsEntry("mode", "client").containsEntry("url", server.uri());
    }
  }
}
