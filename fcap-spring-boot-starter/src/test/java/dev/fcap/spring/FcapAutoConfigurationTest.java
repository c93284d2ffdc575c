package dev.fcap.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.client.Decision;
import dev.fcap.client.Message;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The auto-configuration in an application context, embedded mode and client mode. */
class FcapAutoConfigurationTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(FcapAutoConfiguration.class));
  private final ApplicationContextRunner embedded = runner.withPropertyValues(
      "fcap.rules[0].id=per-minute", "fcap.rules[0].limit=3", "fcap.rules[0].window=1m", "fcap.rules[0].key[0]=recipient",
      "fcap.rules[1].id=marketing-per-day", "fcap.rules[1].limit=1", "fcap.rules[1].window=24h",
      "fcap.rules[1].key[0]=recipient", "fcap.rules[1].match.category[0]=marketing");

  @Test
  void embeddedRulesFromPropertiesCapInProcessWithMetricsAndHealth() {
    embedded.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
      Fcap fcap = context.getBean(Fcap.class);
      assertThat(fcap.mode()).isEqualTo("embedded");
      assertThat(fcap.decide(Message.builder("u1").category("marketing").build()).allowed()).isTrue();
      Decision second = fcap.decide(Message.builder("u1").category("marketing").build());
      assertThat(second.blockedBy()).containsExactly("marketing-per-day");
      assertThat(fcap.decide(Message.of("u1")).allowed()).isTrue();
      assertThat(fcap.decide(Message.of("u1")).allowed()).isTrue();
      assertThat(fcap.decide(Message.of("u1")).blockedBy()).containsExactly("per-minute");
      assertThat(fcap.check(Message.of("u2")).allowed()).isTrue();

      MeterRegistry registry = context.getBean(MeterRegistry.class);
      assertThat(registry.get("fcap.decisions").tag("outcome", "allowed").counter().count()).isEqualTo(3);
      assertThat(registry.get("fcap.decisions").tag("outcome", "denied").counter().count()).isEqualTo(2);
      assertThat(registry.get("fcap.decision.latency").timer().count()).isEqualTo(5);
      assertThat(context.getBean("fcapHealthIndicator", HealthIndicator.class).health().getStatus())
          .isEqualTo(Status.UP);
    });
  }

  @Test
  void capBeforeSendRunsTheSendOnlyWhenAdmittedAndReleasesWhenItFails() {
    embedded.withUserConfiguration(Senders.class).run(context -> {
      SmsSender sms = context.getBean(SmsSender.class);
      sms.send("r1", "hello");
      sms.send("r1", "hello");
      sms.send("r1", "hello");
      assertThatThrownBy(() -> sms.send("r1", "hello")).isInstanceOfSatisfying(MessageCappedException.class,
          e -> assertThat(e.decision().blockedBy()).containsExactly("per-minute"));
      assertThat(sms.sent()).containsExactly("r1:hello", "r1:hello", "r1:hello");

      assertThatThrownBy(() -> sms.send("r2", "fail")).isInstanceOf(IllegalStateException.class);
      sms.send("r2", "a");
      sms.send("r2", "b");
      sms.send("r2", "c");
      assertThat(sms.sent()).as("the failed send was released: three more pass").hasSize(6);

      Fcap fcap = context.getBean(Fcap.class);
      List<String> out = new ArrayList<>();
      Decision d = fcap.sendIfAllowed(Message.of("r3"), () -> out.add("sent"));
      assertThat(d.allowed()).isTrue();
      assertThat(out).containsExactly("sent");
    });
  }

  @Test
  void rulesFromAFileAndClearErrorsForBadOrMissingRules() throws Exception {
    Path file = Files.createTempFile("fcap-rules", ".yaml");
    try {
      Files.writeString(file, "policies:\n  - tenant: default\n    rules:\n"
          + "      - {id: per-hour, limit: 1, window: 1h, key: [recipient]}\n");
      runner.withPropertyValues("fcap.rules-file=" + file).run(context -> {
        Fcap fcap = context.getBean(Fcap.class);
        assertThat(fcap.decide(Message.of("f")).allowed()).isTrue();
        assertThat(fcap.decide(Message.of("f")).blockedBy()).containsExactly("per-hour");
      });
    } finally {
      Files.delete(file);
    }
    runner.withPropertyValues("fcap.rules[0].id=bad", "fcap.rules[0].limit=-1", "fcap.rules[0].window=1m",
        "fcap.rules[0].key[0]=recipient").run(context -> assertThat(context).hasFailed()
            .getFailure().rootCause().hasMessageContaining("limit"));
    runner.run(context -> assertThat(context).hasFailed().getFailure().rootCause()
        .hasMessageContaining("fcap.url").hasMessageContaining("fcap.rules"));
  }

  @Test
  void clientModeWithAnUnreachableServerIsDownAndFallsBackAsConfigured() {
    runner.withPropertyValues("fcap.url=http://127.0.0.1:9", "fcap.fallback=allow", "fcap.max-attempts=1",
        "fcap.request-timeout=200ms").run(context -> {
          Fcap fcap = context.getBean(Fcap.class);
          assertThat(fcap.mode()).isEqualTo("client");
          Decision d = fcap.decide(Message.of("x"));
          assertThat(d.allowed()).isTrue();
          assertThat(d.fallback()).isTrue();
          assertThat(context.getBean("fcapHealthIndicator", HealthIndicator.class).health().getStatus())
              .isEqualTo(Status.DOWN);
        });
  }

  @Test
  void anApplicationsOwnFcapBeanWins() {
    runner.withBean(Fcap.class, () -> new EmbeddedFcap(List.of())).run(context ->
        assertThat(context.getBean(Fcap.class)).isInstanceOf(EmbeddedFcap.class));
  }

  @Configuration(proxyBeanMethods = false)
  static class Senders {
    @Bean
    SmsSender smsSender() {
      return new SmsSender();
    }
  }

  static class SmsSender {
    private final List<String> sent = new ArrayList<>();

    /** Through a method: the bean is a proxy, its own fields are not the target's. */
    public List<String> sent() {
      return sent;
    }

    @CapBeforeSend(recipient = "#to", content = "#text", channel = "sms")
    public void send(String to, String text) {
      if (text.equals("fail")) {
        throw new IllegalStateException("gateway down");
      }
      sent.add(to + ":" + text);
    }
  }
}
