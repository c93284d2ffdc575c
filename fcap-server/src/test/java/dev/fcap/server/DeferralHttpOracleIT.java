package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.oracle.DeferralOracleProperties;
import dev.fcap.oracle.OracleRun;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.ManualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Deferred decisions through the whole server, over HTTP, against the deferral oracle: the traffic of
 * {@code DeferralOracleProperties} (random policies of sliding logs, fixed windows and send windows in
 * zones with daylight saving; deferred and plain messages, message-id retries, releases by decision
 * id and resets) on a server whose clock the test moves forward before each decision. Every answer's
 * {@code allowed}, {@code deferred}, {@code sendAt}, {@code blockedBy} and {@code replayed} must be
 * the oracle's, and no answer may put a window over its limit.
 */
class DeferralHttpOracleIT {
  private static final int STEPS = 700;

  @ParameterizedTest(name = "policy {0}")
  @ValueSource(longs = {3, 11, 22})
  void deferredDecisionsOverHttpAgreeWithTheOracle(long seed) throws IOException {
    SplittableRandom random = new SplittableRandom(seed);
    Policy policy = DeferralOracleProperties.randomPolicy(random);
    ManualClock wall = new ManualClock(DeferralOracleProperties.START);
    AtomicLong monotonic = new AtomicLong(1_000_000_000L);
    TestServer server = TestServer.start(PolicyParser.toYaml(List.of(policy)),
        Map.of("store.fsync", "off", "release.horizon", "7d"), b -> b.clock(wall).monotonicNanos(monotonic::get));
    DeferralOracleProperties.Run run = new DeferralOracleProperties.Run(seed,
        PolicyParser.parseFile(server.dir.resolve("rules.yaml")).get(0), new OverHttp(server, wall, monotonic),
        Duration.ofDays(7).toMillis(), false);
    run.steps(random, STEPS);
    assertThat(run.over).as("seed %d: %s", seed, run.first).isZero();
    assertThat(run.mismatches).as("seed %d: %s", seed, run.first).isZero();
    assertThat(run.admitted).as("seed %d admits", seed).isPositive();
  }

  /** The server as the oracle's target: its clock set to each decision's time (which only moves on). */
  private final class OverHttp implements OracleRun.Target {
    private final TestServer server;
    private final ManualClock wall;
    private final AtomicLong monotonic;

    OverHttp(TestServer server, ManualClock wall, AtomicLong monotonic) {
      this.server = server;
      this.wall = wall;
      this.monotonic = monotonic;
    }

    @Override
    public Decision decide(Message m, long time, boolean dryRun) {
      // the server's clock reads the wall clock and keeps time between its reads by the monotonic one
      monotonic.addAndGet((time - wall.millis()) * 1_000_000);
      wall.set(time);
      ObjectNode o = TestServer.JSON.createObjectNode();
      o.put("recipient", m.recipient()).put("content", m.content()).put("cost", m.cost())
          .put("priority", m.priority().id());
      if (m.timeZone() != null) {
        o.put("timeZone", m.timeZone().getId());
      }
      if (m.messageId() != null) {
        o.put("messageId", m.messageId());
      }
      if (m.defer() != null) {
        o.put("defer", true);
        if (m.defer().hasNotAfter()) {
          o.put("notAfter", m.defer().notAfter());
        }
      }
      JsonNode j = ok(server.post(dryRun ? "/v1/decisions/check" : "/v1/decisions", o.toString()));
      List<String> blocked = new ArrayList<>();
      j.get("blockedBy").forEach(n -> blocked.add(n.asText()));
      boolean replayed = j.path("replayed").asBoolean();
      if (j.get("deferred").asBoolean()) {
        return Decision.deferred(j.get("decisionId").asText(), j.get("retryAfterMs").asLong(), blocked, List.of(),
            List.of(), false, j.get("time").asLong(), j.get("policyVersion").asLong(), replayed, j.get("sendAt").asLong());
      }
      return new Decision(j.get("allowed").asBoolean(), j.get("decisionId").asText(), j.get("retryAfterMs").asLong(),
          blocked, List.of(), List.of(), false, j.get("time").asLong(), j.get("policyVersion").asLong(), replayed,
          j.path("sendAt").asLong(0));
    }

    @Override
    public boolean release(String decisionId) {
      return ok(server.post("/v1/decisions/" + decisionId + "/release", "")).get("released").asBoolean();
    }

    @Override
    public void setPolicy(Policy policy) {
      throw new UnsupportedOperationException("the server's run edits no rule");
    }

    @Override
    public void reset(String tenant, String recipient) {
      ok(server.delete("/v1/recipients/" + recipient));
    }

    @Override
    public void close() {
      server.close();
    }

    private JsonNode ok(TestServer.Reply r) {
      assertThat(r.status()).as("%s", r.raw().body()).isBetween(200, 299);
      return r.body() == null ? TestServer.JSON.createObjectNode() : r.body();
    }
  }
}
