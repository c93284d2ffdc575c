package dev.fcap.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.policy.PolicyException;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The recipient's zone through the starter: properties, {@link CapBeforeSend}, and when a capped message may go. */
class TimeZoneStarterTest {
  private final ApplicationContextRunner embedded = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(FcapAutoConfiguration.class))
      .withPropertyValues("fcap.time-zone=Asia/Kolkata",
          "fcap.rules[0].id=one-per-minute", "fcap.rules[0].limit=1", "fcap.rules[0].window=1m",
          "fcap.rules[0].key[0]=recipient");

  @Test
  void propertiesSetThePolicyZoneSendWindowsAndRecipientCalendars() {
    FcapProperties p = new FcapProperties();
    p.setTimeZone("Asia/Kolkata");
    FcapProperties.RuleProperties daily = new FcapProperties.RuleProperties();
    daily.setId("daily");
    daily.setLimit(3L);
    daily.setWindow("1d");
    daily.setKey(List.of("recipient"));
    daily.setAlgorithm("fixed-window");
    daily.setZone("recipient");
    FcapProperties.RuleProperties quiet = new FcapProperties.RuleProperties();
    quiet.setId("quiet-hours");
    FcapProperties.SendWindowProperties window = new FcapProperties.SendWindowProperties();
    FcapProperties.IntervalProperties weekdays = new FcapProperties.IntervalProperties();
    weekdays.setDays(List.of("mon", "tue"));
    weekdays.setFrom("08:00");
    weekdays.setTo("21:00");
    window.setAllow(List.of(weekdays));
    window.setClosed(List.of("2026-12-25"));
    quiet.setSendWindow(window);
    p.setRules(new ArrayList<>(List.of(daily, quiet)));
    Policy policy = FcapAutoConfiguration.policies(p).get(0);
    assertThat(policy.timeZone()).isEqualTo(ZoneId.of("Asia/Kolkata"));
    assertThat(policy.rules().get(0).recipientZone()).isTrue();
    Rule sendWindow = policy.rules().get(1);
    assertThat(sendWindow.isSendWindow()).isTrue();
    assertThat(sendWindow.sendWindow().recipientZone()).isTrue();
    assertThat(sendWindow.sendWindow().closed()).hasSize(1);

    p.setTimeZone("Asia/Calcutta-ish");
    assertThatThrownBy(() -> FcapAutoConfiguration.policies(p)).isInstanceOf(PolicyException.class)
        .hasMessageContaining("timeZone");
  }

  @Test
  void aCappedMessageSaysWhenItMayGo() {
    embedded.withUserConfiguration(Senders.class).run(context -> {
      Sender sender = context.getBean(Sender.class);
      sender.send("z1", "America/New_York");
      assertThatThrownBy(() -> sender.send("z1", "America/New_York"))
          .isInstanceOfSatisfying(MessageCappedException.class, e -> {
            assertThat(e.sendAt()).isPositive().isEqualTo(e.decision().time() + e.decision().retryAfterMs());
            assertThat(e.getMessage()).contains("send at");
          });
      assertThatThrownBy(() -> sender.send("z2", "Mars/Olympus")).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("timeZone").hasMessageContaining("Mars/Olympus");
      assertThat(sender.sent()).containsExactly("z1");
    });
  }

  @Configuration
  static class Senders {
    @Bean
    Sender sender() {
      return new Sender();
    }
  }

  static class Sender {
    private final List<String> sent = new ArrayList<>();

    public List<String> sent() {
      return sent;
    }

    @CapBeforeSend(recipient = "#to", timeZone = "#zone")
    public void send(String to, String zone) {
      sent.add(to);
    }
  }
}
