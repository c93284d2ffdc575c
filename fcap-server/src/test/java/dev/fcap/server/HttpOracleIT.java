package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcome;
import dev.fcap.model.Suppression;
import dev.fcap.oracle.Oracle;
import dev.fcap.oracle.SuppressionChurn;
import dev.fcap.oracle.Traffic;
import dev.fcap.policy.PolicyParser;
import dev.fcap.store.ManualClock;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.memory.MemoryStore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The server over HTTP, with concurrent callers, against the {@link Oracle}. A random policy keyed by
 * the recipient (every algorithm, shadow rules, match and exempt, costs above 1). Each caller owns
 * some recipients nobody else sends to: those decisions must equal the oracle's, field by field.
 * All callers also send to a few shared recipients, interleaving: there the admitted messages, in
 * time order, must never put any window over its limit. The store's clock is a manual one that the
 * callers advance as they go, so windows slide and expire during the run, and that now and then
 * steps back. Each caller puts and removes suppression entries of its own recipients through the
 * API ({@link SuppressionChurn}: scopes, expiries), which states which decision is suppressed; a
 * decision whose time range (the clock moves under the other callers) holds the entry's expiry may
 * go either way, and is judged by the way it went.
 */
class HttpOracleIT {
  private static final int CALLERS = 8;
  private static final int REQUESTS = 200;

  @ParameterizedTest
  @ValueSource(longs = {21, 22})
  void concurrentCallersAreHeldToTheOracle(long seed) throws Exception {
    List<Rule> rules = new ArrayList<>();
    for (Rule r : Traffic.randomPolicy(seed, 12, true).rules()) {
      // the engine aligns calendar days by its own (system) clock, the store counts by the manual one
      Rule kept = r.zone() == null ? r : new Rule(r.id(), null, r.limit(), r.window(), r.key(), r.match(), r.exempt(),
          r.algorithm(), r.precision(), r.mode(), null);
      // no count-only rules: the interleaved recipients are judged by replaying their admitted messages
      // alone, which holds only while no admitted message may go past a limit (EngineOracleProperties
      // and RedisOracleIT hold count-only rules to the oracle)
      rules.add(kept.withCountOnly(null));
    }
    Policy policy = new Policy("default", 1, rules);
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    MemoryStore store = MemoryStore.builder().clock(clock).segments(2).build();
    try (TestServer server = TestServer.start(Traffic.yaml(policy), Map.of(), store)) {
      Policy served = PolicyParser.parseFile(server.dir.resolve("rules.yaml")).get(0); // what the server reads
      Map<String, List<Object[]>> shared = new ConcurrentHashMap<>(); // recipient -> {message, decision}
      AtomicLong suppressed = new AtomicLong();
      ExecutorService pool = Executors.newFixedThreadPool(CALLERS);
      List<Future<List<String>>> callers = new ArrayList<>();
      for (int c = 0; c < CALLERS; c++) {
        int caller = c;
        callers.add(pool.submit(() -> call(server, served, clock, seed * 100 + caller, shared, suppressed)));
      }
      List<String> mismatches = new ArrayList<>();
      for (Future<List<String>> f : callers) {
        mismatches.addAll(f.get(120, TimeUnit.SECONDS));
      }
      pool.shutdown();
      assertThat(mismatches).as("decisions of recipients with one caller").isEmpty();
      assertThat(suppressed).as("suppressed decisions").hasPositiveValue();
      for (Map.Entry<String, List<Object[]>> e : shared.entrySet()) {
        assertNeverOver(served, e.getKey(), e.getValue());
      }
    }
  }

  /** One caller: its own recipients, judged decision by decision, and the shared ones, collected. */
  private static List<String> call(TestServer server, Policy policy, ManualClock clock, long seed,
      Map<String, List<Object[]>> shared, AtomicLong suppressed) {
    SplittableRandom random = new SplittableRandom(seed);
    Oracle oracle = new Oracle(policy);
    SuppressionChurn churn = new SuppressionChurn(seed, 20);
    SuppressionList list = new HttpSuppressions(server);
    List<String> mismatches = new ArrayList<>();
    for (int i = 0; i < REQUESTS; i++) {
      boolean own = random.nextBoolean();
      String recipient = own ? "own-" + seed + "-" + random.nextInt(3) : "shared-" + random.nextInt(3);
      Message m = Message.builder(recipient)
          .channel(random.nextBoolean() ? "sms" : "push")
          .category(random.nextInt(5) == 0 ? "otp" : "service")
          .content("content " + random.nextInt(3))
          .cost(random.nextInt(8) == 0 ? 2 : 1)
          .build();
      if (own) {
        churn.beforeDecision(list, m.tenant(), m, clock.millis());
      }
      long before = clock.millis();
      Decision d = decision(server.decide(json(m)).body());
      long after = clock.millis();
      // the engine reads the entry at its clock's time during the call; the answer's time may be the
      // partition's, later after a step back
      long early = Math.min(Math.min(before, after), d.time()) - 10_000; // other callers' steps back
      long late = Math.max(Math.max(before, after), d.time());
      Suppression entry = own ? churn.covering(m.tenant(), m, d.time()) : null;
      if (own && (churn.covering(m.tenant(), m, early) == null) != (churn.covering(m.tenant(), m, late) == null)) {
        // the entry expires within the call's time range: judged by the way the decision went
        entry = d.blockedBy().contains(Suppression.BLOCKED_BY) ? churn.covering(m.tenant(), m, early) : null;
      }
      if (entry != null) {
        List<String> wrong = SuppressionChurn.judge(d, entry);
        if (!wrong.isEmpty() && mismatches.size() < 10) {
          mismatches.add(recipient + " at " + d.time() + " suppressed by " + entry + ": " + wrong);
        }
        suppressed.incrementAndGet(); // nothing recorded: the oracle never sees it
      } else if (own) {
        Oracle.Verdict v = oracle.decide(m, d.time(), false, d, d.decisionId());
        if (!v.matches() && mismatches.size() < 10) {
          mismatches.add(recipient + " at " + d.time() + ": " + v.mismatches());
        }
      } else {
        shared.computeIfAbsent(recipient, k -> java.util.Collections.synchronizedList(new ArrayList<>()))
            .add(new Object[] {m, d});
      }
      advance(random, clock);
    }
    return mismatches;
  }

  /** The store's clock moves on, or steps back. */
  private static void advance(SplittableRandom random, ManualClock clock) {
    int step = random.nextInt(40);
    if (step < 2) {
      // the store's clock steps back (up to 3 s): each partition is still decided at no earlier
      // time than its latest, also one whose counters expired meanwhile (the sweep's grace)
      clock.advance(-1 - random.nextInt(3000));
    } else if (step < 12) {
      clock.advance(random.nextInt(20) == 0 ? random.nextInt(600_000) : random.nextInt(3000));
    }
  }

  /** A tenant's suppression list through the API: what {@link SuppressionChurn} changes. */
  private record HttpSuppressions(TestServer server) implements SuppressionList {
    @Override
    public void put(String tenant, Suppression e) {
      ObjectNode body = TestServer.JSON.createObjectNode().put("reason", e.reason()).put("expiresAt", e.expiresAt());
      e.channels().forEach(body.putArray("channels")::add);
      e.categories().forEach(body.putArray("categories")::add);
      TestServer.Reply r = server.put("/v1/suppressions/" + e.recipient() + "?tenant=" + tenant, body.toString(), Map.of());
      assertThat(r.status()).as("PUT %s: %s", e, r.body()).isEqualTo(200);
    }

    @Override
    public boolean remove(String tenant, String recipient) {
      TestServer.Reply r = server.delete("/v1/suppressions/" + recipient + "?tenant=" + tenant);
      assertThat(r.status()).as("DELETE %s: %s", recipient, r.body()).isEqualTo(200);
      return r.body().get("removed").asBoolean();
    }

    @Override
    public void putAll(String tenant, List<Suppression> entries) {
      throw new UnsupportedOperationException();
    }

    @Override
    public java.util.Optional<Suppression> get(String tenant, String recipient) {
      throw new UnsupportedOperationException();
    }

    @Override
    public List<Suppression> page(String tenant, String cursor, int limit) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long size(String tenant) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Suppression find(String tenant, String recipient, String channel, String category, long now) {
      throw new UnsupportedOperationException();
    }
  }

  /** The admitted messages of an interleaved recipient, replayed in time order: none over a limit. */
  private static void assertNeverOver(Policy policy, String recipient, List<Object[]> sent) {
    List<Object[]> admitted = new ArrayList<>(sent.stream().filter(s -> ((Decision) s[1]).allowed()).toList());
    admitted.sort(Comparator.comparingLong(s -> ((Decision) s[1]).time()));
    Oracle oracle = new Oracle(policy);
    int i = 0;
    for (Object[] s : admitted) {
      Decision d = (Decision) s[1];
      Oracle.Verdict v = oracle.decide((Message) s[0], d.time(), false, d, "a" + i++);
      assertThat(v.overAdmission()).as("%s at %d: %s", recipient, d.time(), v.mismatches()).isFalse();
    }
    assertThat(admitted).as("%s got something", recipient).isNotEmpty();
  }

  private static String json(Message m) {
    ObjectNode o = TestServer.JSON.createObjectNode();
    o.put("recipient", m.recipient()).put("channel", m.channel()).put("category", m.category())
        .put("content", m.content()).put("cost", m.cost()).put("priority", m.priority().id());
    if (m.override()) {
      o.put("override", true); // a server without keys: every local caller may
    }
    return o.toString();
  }

  /** A decision as the API writes it (single, or an item of a batch). */
  static Decision decision(JsonNode j) {
    List<RuleOutcome> rules = new ArrayList<>();
    for (JsonNode r : j.get("rules")) {
      rules.add(new RuleOutcome(r.get("id").asText(), r.get("limit").asLong(), r.get("windowMs").asLong(),
          r.get("used").asLong(), r.get("remaining").asLong(), r.get("allowed").asBoolean(),
          r.get("enforced").asBoolean(), r.get("retryAfterMs").asLong(), r.path("sendAt").asLong(0),
          r.path("bound").asLong(r.get("limit").asLong())));
    }
    return new Decision(j.get("allowed").asBoolean(), j.get("decisionId").asText(), j.get("retryAfterMs").asLong(),
        strings(j.get("blockedBy")), strings(j.get("shadowBlockedBy")), rules, j.get("degraded").asBoolean(),
        j.get("time").asLong(), j.get("policyVersion").asLong(), false, j.path("sendAt").asLong(0),
        j.path("degradedReason").asText(null), j.path("suppressedReason").asText(null));
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }
}
