package dev.fcap.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The deferral on the wire, against the HTTP API's JSON as literals. */
class CodecTest {

  private static String json(Message m) {
    return new String(Codec.bytes(Codec.message(m, m.messageId())), StandardCharsets.UTF_8);
  }

  @Test
  void aDeferralIsDeferTrueAndItsLatestInstantInEpochMs() {
    assertThat(json(Message.builder("r1").defer(Defer.BY_DEFAULT).build()))
        .isEqualTo("{\"recipient\":\"r1\",\"defer\":true}");
    assertThat(json(Message.builder("r1").messageId("m1").defer(Defer.until(Instant.ofEpochMilli(1_767_225_600_000L)))
        .build())).isEqualTo("{\"recipient\":\"r1\",\"messageId\":\"m1\",\"defer\":true,\"notAfter\":1767225600000}");
    assertThat(json(Message.of("r1"))).as("no deferral: no field").isEqualTo("{\"recipient\":\"r1\"}");
    assertThat(json(Message.builder("r1").defer(Defer.BY_DEFAULT).build().withDefer(null)))
        .isEqualTo("{\"recipient\":\"r1\"}");
  }

  @Test
  void aBookedDecisionReadsDeferredWithItsSlot() {
    Decision d = Codec.decision(Codec.tree("""
        {"allowed":false,"deferred":true,"decisionId":"0a1b2c","retryAfterMs":3599000,"sendAt":1767229200000,
         "time":1767225601000,"policyVersion":3,"blockedBy":["two-per-hour"],"shadowBlockedBy":[],"rules":[],
         "degraded":false,"replayed":false}
        """.getBytes(StandardCharsets.UTF_8)), "m1");
    assertThat(d.allowed()).isFalse();
    assertThat(d.deferred()).isTrue();
    assertThat(d.sendAt()).isEqualTo(1_767_229_200_000L);
    assertThat(d.retryAfterMs()).isEqualTo(3_599_000);
    assertThat(d.decisionId()).isEqualTo("0a1b2c");
    assertThat(d.blockedBy()).containsExactly("two-per-hour");
    assertThat(d.messageId()).isEqualTo("m1");
  }

  @Test
  void aDecisionWithoutTheFieldIsNotDeferred() {
    Decision refused = Codec.decision(Codec.tree("""
        {"allowed":false,"deferred":false,"decisionId":"x","retryAfterMs":1000,"sendAt":1767225602000,
         "time":1767225601000,"blockedBy":["two-per-hour"]}
        """.getBytes(StandardCharsets.UTF_8)), null);
    assertThat(refused.deferred()).isFalse();
    Decision older = Codec.decision(Codec.tree("""
        {"allowed":true,"decisionId":"y","retryAfterMs":0,"time":1767225601000}
        """.getBytes(StandardCharsets.UTF_8)), null);
    assertThat(older.deferred()).as("a server before deferral").isFalse();
    assertThat(Decision.fallback(false, Message.builder("r1").defer(Defer.BY_DEFAULT).build(), 60_000, "down")
        .deferred()).as("the fallback books nothing").isFalse();
  }

  @Test
  void aLatestInstantBeforeOrAt1970IsRefused() {
    assertThatThrownBy(() -> Defer.until(Instant.EPOCH)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("notAfter");
    assertThatThrownBy(() -> Defer.until(null)).isInstanceOf(NullPointerException.class);
    assertThat(Message.builder("r1").defer(Defer.BY_DEFAULT).build().toBuilder().build().defer())
        .as("a builder of the message keeps its deferral").isEqualTo(Defer.BY_DEFAULT);
  }
}
