package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.RuleOutcome;
import dev.fcap.model.Suppression;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.memory.Durability;
import dev.fcap.store.memory.MemoryStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Suppression lists through the engine on the embedded store: a recipient in an entry's scope is
 * refused with {@code suppressed} and the entry's reason, until its expiry, and nothing is recorded
 * (the rules still report, from a dry run); out of scope, or once expired or removed, the rules
 * decide as before; the list survives a restart of a durable store.
 */
class EngineSuppressionTest {
  private static final long T0 = 1_780_000_000_000L;
  private static final String TWO_PER_DAY = """
      policies:
        - tenant: acme
          rules:
            - id: two-per-day
              limit: 2
              window: 24h
              key: [recipient]
      """;

  private static Engine engine(MemoryStore store) {
    return Engine.builder(store).callerTime(true).policies(PolicyParser.parse(TWO_PER_DAY)).build();
  }

  private static Message message(String tenant, String recipient, String channel, String category) {
    return Message.builder(recipient).tenant(tenant).channel(channel).category(category).build();
  }

  private static Suppression entry(String recipient, List<String> channels, List<String> categories, long expiresAt) {
    return new Suppression(recipient, channels, categories, "replied STOP", "ops-key", T0, expiresAt);
  }

  /** A deferral books nothing for a suppressed recipient: refused as any message to it, nothing counted. */
  @Test
  void aDeferralForASuppressedRecipientBooksNothing() {
    try (Engine engine = engine(MemoryStore.builder().build())) {
      engine.suppressions().orElseThrow().put("acme", entry("+2", List.of(), List.of(), Suppression.NEVER));
      Decision d = engine.decideAt(Message.builder("+2").tenant("acme").defer(dev.fcap.model.Defer.BY_DEFAULT).build(),
          T0).join();
      assertThat(d.allowed()).isFalse();
      assertThat(d.deferred()).isFalse();
      assertThat(d.blockedBy()).containsExactly(Suppression.BLOCKED_BY);
      assertThat(d.sendAt()).isEqualTo(-1);
      // nothing was booked: with the entry gone, the day's two are still free
      assertThat(engine.suppressions().orElseThrow().remove("acme", "+2")).isTrue();
      assertThat(engine.decideAt(message("acme", "+2", "sms", null), T0 + 1).join().allowed()).isTrue();
      assertThat(engine.decideAt(message("acme", "+2", "sms", null), T0 + 2).join().allowed()).isTrue();
      assertThat(engine.decideAt(message("acme", "+2", "sms", null), T0 + 3).join().blockedBy())
          .containsExactly("two-per-day");
    }
  }

  @Test
  void aSuppressedRecipientIsRefusedWithItsReasonAndNothingIsRecorded() {
    try (Engine engine = engine(MemoryStore.builder().build())) {
      SuppressionList list = engine.suppressions().orElseThrow();
      list.put("acme", entry("+1", List.of(), List.of(), Suppression.NEVER));
      Decision d = engine.decideAt(message("acme", "+1", "sms", "marketing"), T0).join();
      assertThat(d.allowed()).isFalse();
      assertThat(d.blockedBy()).containsExactly(Suppression.BLOCKED_BY);
      assertThat(d.suppressedReason()).isEqualTo("replied STOP");
      assertThat(d.sendAt()).isEqualTo(-1);
      assertThat(d.retryAfterMs()).isEqualTo(-1);
      assertThat(d.rules()).extracting(RuleOutcome::id, RuleOutcome::used, RuleOutcome::allowed)
          .containsExactly(org.assertj.core.groups.Tuple.tuple("two-per-day", 0L, true));
      engine.decideAt(message("acme", "+1", "sms", "marketing"), T0 + 1).join();
      assertThat(list.remove("acme", "+1")).isTrue();
      // the two refusals counted nothing: the day's two are still free
      assertThat(engine.decideAt(message("acme", "+1", "sms", "marketing"), T0 + 2).join().allowed()).isTrue();
      assertThat(engine.decideAt(message("acme", "+1", "sms", "marketing"), T0 + 3).join().allowed()).isTrue();
      assertThat(engine.decideAt(message("acme", "+1", "sms", "marketing"), T0 + 4).join().blockedBy())
          .containsExactly("two-per-day");
    }
  }

  @Test
  void anEntryCoversOnlyItsChannelsAndCategoriesAndItsTenant() {
    try (Engine engine = engine(MemoryStore.builder().build())) {
      SuppressionList list = engine.suppressions().orElseThrow();
      list.put("acme", entry("+1", List.of("sms"), List.of("marketing", "promo"), Suppression.NEVER));
      assertThat(engine.decideAt(message("acme", "+1", "sms", "marketing"), T0).join().blockedBy())
          .containsExactly(Suppression.BLOCKED_BY);
      assertThat(engine.decideAt(message("acme", "+1", "sms", "promo"), T0).join().allowed()).isFalse();
      // out of scope: the rules decide (the day holds two; the third is refused by the rule alone)
      assertThat(engine.decideAt(message("acme", "+1", "email", "marketing"), T0).join().allowed()).isTrue();
      assertThat(engine.decideAt(message("acme", "+1", "sms", "otp"), T0).join().allowed()).isTrue();
      Decision noChannel = engine.decideAt(message("acme", "+1", null, "marketing"), T0).join();
      assertThat(noChannel.blockedBy()).as("a message without a channel is not on a listed channel")
          .containsExactly("two-per-day");
      assertThat(noChannel.suppressedReason()).isNull();
      assertThat(engine.decideAt(message("other", "+1", "sms", "marketing"), T0).join().allowed())
          .as("another tenant's recipient, and a tenant without a policy").isTrue();
    }
  }

  @Test
  void anExpiringEntryRefusesUntilItsExpiryAndTheRulesDecideFromThen() {
    try (Engine engine = engine(MemoryStore.builder().build())) {
      engine.decideAt(message("acme", "+1", "sms", null), T0).join();
      engine.decideAt(message("acme", "+1", "sms", null), T0 + 1).join();
      long expires = T0 + Duration.ofHours(1).toMillis();
      engine.suppressions().orElseThrow().put("acme", entry("+1", List.of(), List.of(), expires));
      Decision d = engine.decideAt(message("acme", "+1", "sms", null), T0 + 10).join();
      assertThat(d.blockedBy()).as("suppression first, then the full day").containsExactly("suppressed", "two-per-day");
      assertThat(d.sendAt()).as("the later of the expiry and the day freeing").isEqualTo(T0 + Duration.ofDays(1).toMillis());
      Decision onlySuppressed = engine.decideAt(message("acme", "+2", "sms", null), T0).join();
      assertThat(onlySuppressed.allowed()).isTrue();
      engine.suppressions().orElseThrow().put("acme", entry("+2", List.of(), List.of(), expires));
      Decision refused = engine.decideAt(message("acme", "+2", "sms", null), T0 + 10).join();
      assertThat(refused.sendAt()).isEqualTo(expires);
      assertThat(refused.retryAfterMs()).isEqualTo(expires - (T0 + 10));
      assertThat(engine.decideAt(message("acme", "+2", "sms", null), expires).join().allowed()).isTrue();
    }
  }

  @Test
  void aTenantWithoutRulesAndAReplayOfRowsAreRefusedToo() {
    try (Engine engine = Engine.builder(MemoryStore.builder().build()).callerTime(true)
        .releaseHorizon(Duration.ZERO).policies(PolicyParser.parse(TWO_PER_DAY)).build()) {
      engine.suppressions().orElseThrow().put("bare", entry("+1", List.of(), List.of(), Suppression.NEVER));
      Decision d = engine.decideAt(message("bare", "+1", null, null), T0).join();
      assertThat(d.blockedBy()).containsExactly(Suppression.BLOCKED_BY);
      assertThat(d.suppressedReason()).isEqualTo("replied STOP");
      engine.suppressions().orElseThrow().put("acme", entry("+1", List.of(), List.of(), Suppression.NEVER));
      List<Boolean> verdicts = new ArrayList<>();
      assertThat(engine.decideAt(message("acme", "+1", null, null), T0, (rule, allowed, enforced) -> verdicts.add(allowed))
          .join()).isFalse();
      assertThat(verdicts).containsExactly(true);
      assertThat(engine.decideAt(message("bare", "+1", null, null), T0, (rule, allowed, enforced) -> {}).join()).isFalse();
      assertThat(engine.decideAt(message("acme", "+2", null, null), T0, (rule, allowed, enforced) -> {}).join()).isTrue();
    }
  }

  @Test
  void aDurableStoreKeepsItsListsAcrossARestartAndCutsATornTail(@TempDir Path dir) throws Exception {
    Durability durability = Durability.everyWrite(dir);
    try (Engine engine = engine(MemoryStore.builder().durable(durability).build())) {
      SuppressionList list = engine.suppressions().orElseThrow();
      list.put("acme", entry("+1", List.of("sms"), List.of(), Suppression.NEVER));
      list.putAll("acme", List.of(entry("+2", List.of(), List.of(), Suppression.NEVER),
          entry("+3", List.of(), List.of("promo"), T0 + Duration.ofDays(3650).toMillis())));
      assertThat(list.remove("acme", "+2")).isTrue();
    }
    // a crash mid-append leaves part of a record behind
    java.nio.file.Files.write(dir.resolve("suppressions.log"), new byte[] {0, 0, 0, 40, 1, 2},
        java.nio.file.StandardOpenOption.APPEND);
    try (Engine engine = engine(MemoryStore.builder().durable(durability).build())) {
      SuppressionList list = engine.suppressions().orElseThrow();
      assertThat(list.size("acme")).isEqualTo(2);
      assertThat(list.get("acme", "+1").orElseThrow().channels()).containsExactly("sms");
      assertThat(list.get("acme", "+2")).isEmpty();
      assertThat(engine.decideAt(message("acme", "+1", "sms", null), T0).join().blockedBy())
          .containsExactly(Suppression.BLOCKED_BY);
      assertThat(engine.decideAt(message("acme", "+3", "sms", "promo"), T0).join().allowed()).isFalse();
      list.put("acme", entry("+4", List.of(), List.of(), Suppression.NEVER)); // appends after the cut tail
    }
    try (Engine engine = engine(MemoryStore.builder().durable(durability).build())) {
      assertThat(engine.suppressions().orElseThrow().page("acme", null, 10)).extracting(Suppression::recipient)
          .containsExactly("+1", "+3", "+4");
    }
  }

  @Test
  void pagesFollowTheRecipientOrderFromTheCursor() {
    try (Engine engine = engine(MemoryStore.builder().build())) {
      SuppressionList list = engine.suppressions().orElseThrow();
      for (String r : List.of("d", "a", "c", "e", "b")) {
        list.put("acme", entry(r, List.of(), List.of(), Suppression.NEVER));
      }
      assertThat(list.page("acme", null, 2)).extracting(Suppression::recipient).containsExactly("a", "b");
      assertThat(list.page("acme", "b", 2)).extracting(Suppression::recipient).containsExactly("c", "d");
      assertThat(list.page("acme", "d", 2)).extracting(Suppression::recipient).containsExactly("e");
      assertThat(list.page("nobody", null, 2)).isEmpty();
    }
  }

  @Test
  void anOverrideNeverPassesASuppressionList() {
    try (Engine engine = engine(MemoryStore.builder().build())) {
      engine.suppressions().orElseThrow().put("acme", entry("+1", List.of(), List.of(), Suppression.NEVER));
      Message override = Message.builder("+1").tenant("acme").override(true).build();
      Decision d = engine.decideAt(override, T0).join();
      assertThat(d.allowed()).isFalse();
      assertThat(d.blockedBy()).containsExactly(Suppression.BLOCKED_BY);
      assertThat(d.suppressedReason()).isEqualTo("replied STOP");
      // nothing was counted: once removed, the recipient has the whole day
      engine.suppressions().orElseThrow().remove("acme", "+1");
      assertThat(engine.decideAt(Message.builder("+1").tenant("acme").build(), T0 + 1).join().rules().get(0).used())
          .isZero();
    }
  }
}
