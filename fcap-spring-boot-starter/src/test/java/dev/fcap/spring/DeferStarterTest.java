package dev.fcap.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fcap.client.Decision;
import dev.fcap.model.InvalidMessageException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@code @CapBeforeSend(defer = true)} on the embedded store: the slot handed to the method, or thrown. */
class DeferStarterTest {
  private static final long HOUR = 3_600_000;
  private final ApplicationContextRunner embedded = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(FcapAutoConfiguration.class))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
      .withUserConfiguration(Senders.class)
      .withPropertyValues("fcap.rules[0].id=one-per-hour", "fcap.rules[0].limit=1", "fcap.rules[0].window=1h",
          "fcap.rules[0].key[0]=recipient",
          "fcap.rules[1].id=smooth-digests", "fcap.rules[1].limit=1", "fcap.rules[1].window=2d",
          "fcap.rules[1].key[0]=recipient", "fcap.rules[1].algorithm=gcra", "fcap.rules[1].match.category[0]=digest");

  @Test
  void aDeferredSlotGoesToTheMethodsDecisionParameter() {
    embedded.run(context -> {
      Sender sender = context.getBean(Sender.class);
      sender.schedule("d1", null, null);
      sender.schedule("d1", null, null);
      List<Decision> handed = sender.handed();
      assertThat(handed).extracting(Decision::allowed).containsExactly(true, false);
      Decision slot = handed.get(1);
      assertThat(slot.deferred()).isTrue();
      assertThat(slot.sendAt()).as("when the admitted one leaves the hour").isEqualTo(handed.get(0).time() + HOUR);
      assertThat(sender.sent()).containsExactly("d1");
      assertThat(sender.scheduled()).containsExactly("d1@" + slot.sendAt());
      assertThat(context.getBean(MeterRegistry.class).get("fcap.decisions").tag("outcome", "deferred").counter()
          .count()).isEqualTo(1);
    });
  }

  @Test
  void withoutADecisionParameterTheCallThrowsTheSlot() {
    embedded.run(context -> {
      Sender sender = context.getBean(Sender.class);
      sender.send("d2");
      MessageCappedException e = catchThrowableOfType(() -> sender.send("d2"), MessageCappedException.class);
      assertThat(e.deferred()).isTrue();
      assertThat(e.decision().allowed()).isFalse();
      assertThat(e.sendAt()).isEqualTo(e.decision().time() + e.decision().retryAfterMs()).isPositive();
      assertThat(e.getMessage()).contains("booked to send at");
      assertThat(sender.sent()).as("not called").containsExactly("d2");
      sender.schedule("d2", null, null);
      assertThat(sender.handed().get(0).sendAt()).as("the thrown slot is held: the next books an hour later")
          .isEqualTo(e.sendAt() + HOUR);
    });
  }

  @Test
  void aPlainRefusalAndNoSlotByNotAfterThrowAsToday() {
    embedded.run(context -> {
      Sender sender = context.getBean(Sender.class);
      sender.plain("d3");
      assertThatThrownBy(() -> sender.plain("d3")).isInstanceOfSatisfying(MessageCappedException.class, e -> {
        assertThat(e.deferred()).isFalse();
        assertThat(e.decision().blockedBy()).containsExactly("one-per-hour");
        assertThat(e.getMessage()).startsWith("message capped by");
      });
      Instant soon = Instant.now().plusSeconds(60);
      assertThatThrownBy(() -> sender.by("d3", soon)).isInstanceOfSatisfying(MessageCappedException.class,
          e -> assertThat(e.deferred()).as("no slot within a minute").isFalse());
      String inTwoHours = Instant.now().plusSeconds(7_200).toString();
      assertThatThrownBy(() -> sender.by("d3", inTwoHours)).isInstanceOfSatisfying(MessageCappedException.class,
          e -> assertThat(e.deferred()).as("ISO-8601 text is an instant").isTrue());
      assertThatThrownBy(() -> sender.by("d3", "yesterday-ish")).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("notAfter").hasMessageContaining("yesterday-ish");
      assertThat(sender.sent()).containsExactly("d3");
    });
  }

  @Test
  void aFailedScheduleReleasesTheSlotAndAnUnbookableRuleSaysSo() {
    embedded.run(context -> {
      Sender sender = context.getBean(Sender.class);
      sender.send("d5");
      assertThatThrownBy(() -> sender.schedule("d5", "scheduler down", null)).isInstanceOf(IllegalStateException.class);
      long released = sender.handed().get(0).sendAt();
      sender.schedule("d5", null, null);
      assertThat(sender.handed().get(1).sendAt()).as("the failed schedule gave its slot back").isEqualTo(released);

      assertThatThrownBy(() -> sender.digest("d6")).isInstanceOfSatisfying(InvalidMessageException.class, e -> {
        assertThat(e.field()).isEqualTo("defer");
        assertThat(e.getMessage()).contains("smooth-digests");
      });
      assertThat(sender.sent()).containsExactly("d5");
    });
  }

  @Configuration(proxyBeanMethods = false)
  static class Senders {
    @Bean
    Sender sender() {
      return new Sender();
    }
  }

  static class Sender {
    private final List<String> sent = new ArrayList<>();
    private final List<String> scheduled = new ArrayList<>();
    private final List<Decision> handed = new ArrayList<>();

    /** Through methods: the bean is a proxy, its own fields are not the target's. */
    public List<String> sent() {
      return sent;
    }

    public List<String> scheduled() {
      return scheduled;
    }

    public List<Decision> handed() {
      return handed;
    }

    @CapBeforeSend(recipient = "#to", defer = true)
    public void schedule(String to, String failure, Decision slot) {
      handed.add(slot);
      if (failure != null) {
        throw new IllegalStateException(failure);
      }
      if (slot.deferred()) {
        scheduled.add(to + "@" + slot.sendAt());
      } else {
        sent.add(to);
      }
    }

    @CapBeforeSend(recipient = "#to", defer = true)
    public void send(String to) {
      sent.add(to);
    }

    @CapBeforeSend(recipient = "#to")
    public void plain(String to) {
      sent.add(to);
    }

    @CapBeforeSend(recipient = "#to", defer = true, notAfter = "#notAfter")
    public void by(String to, Object notAfter) {
      sent.add(to);
    }

    @CapBeforeSend(recipient = "#to", category = "digest", defer = true)
    public void digest(String to) {
      sent.add(to);
    }
  }
}
