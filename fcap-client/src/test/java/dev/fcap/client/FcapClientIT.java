package dev.fcap.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fcap.server.auth.Authenticator;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The client against a real fcap server on loopback: every operation, failures, a restart under load. */
class FcapClientIT {
  static RealServer server;
  static FcapClient fcap;
  /** Whether the server honours messageId; until it does, the client sends none. */
  static boolean serverKnowsMessageIds;

  @BeforeAll
  static void start() {
    server = RealServer.start();
    try {
      FcapClient.create(ClientOptions.builder(server.url()).requestTimeout(Duration.ofSeconds(10)).build())
          .decide(Message.builder("probe").messageId("probe-1").build());
      serverKnowsMessageIds = true;
    } catch (FcapException e) {
      assertThat(e.code()).isEqualTo("unknown_field");
      assertThat(e.field()).isEqualTo("messageId");
    }
    fcap = FcapClient.create(options(server.url()).build());
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static ClientOptions.Builder options(String url) {
    // generous: the machine is shared, and a timeout here would be a retry, not a failure, anyway
    return ClientOptions.builder(url).requestTimeout(Duration.ofSeconds(5));
  }

  @Test
  void decideCheckReleaseInspectReset() {
    decideCheckReleaseInspectReset(fcap);
  }

  @Test
  void theRecipientsZoneIsSentAndARefusalSaysWhenToSend() {
    Message m = Message.builder("+8613800000009").content("tz").timeZone(java.time.ZoneId.of("Asia/Shanghai")).build();
    assertThat(m.toBuilder().build().timeZone()).isEqualTo(java.time.ZoneId.of("Asia/Shanghai"));
    Decision first = fcap.decide(m);
    assertThat(first.allowed()).isTrue();
    assertThat(first.sendAt()).isZero();
    assertThat(first.rules()).allSatisfy(r -> assertThat(r.sendAt()).isZero());
    fcap.decide(m);
    Decision third = fcap.decide(m);
    assertThat(third.allowed()).isFalse();
    assertThat(third.sendAt()).isEqualTo(third.time() + third.retryAfterMs());
    assertThat(third.rules()).filteredOn(r -> !r.allowed()).singleElement()
        .satisfies(r -> assertThat(r.sendAt()).isEqualTo(third.time() + r.retryAfterMs()));
  }

  @Test
  void aDeferredMessageIsBookedForWhenItsWindowFreesAndItsIdReleasesTheSlot() {
    Message m = Message.builder("+8613800000010").content("deferred").build();
    Decision first = fcap.decide(m);
    fcap.decide(m);
    Decision booked = fcap.decide(m, Defer.BY_DEFAULT);
    assertThat(booked.allowed()).isFalse();
    assertThat(booked.deferred()).isTrue();
    assertThat(booked.blockedBy()).containsExactly("same-content-per-59s");
    assertThat(booked.sendAt()).isEqualTo(first.time() + 59_000); // the first leaves the 59 s window
    Decision tooLate = fcap.decide(m, Defer.until(java.time.Instant.ofEpochMilli(first.time() + 1_000)));
    assertThat(tooLate.deferred()).isFalse();
    assertThat(tooLate.allowed()).isFalse();
    fcap.release(booked.decisionId());
    assertThat(fcap.decide(m, Defer.BY_DEFAULT).sendAt()).as("the released slot is free again")
        .isEqualTo(booked.sendAt());
  }

  @Test
  void inspectShowsTheSendWindowsInTheZoneAsked() {
    // a window of three hours around now in Tokyo, the policy's zone: open there, shut in New York
    java.time.LocalTime tokyo = java.time.LocalTime.now(java.time.ZoneId.of("Asia/Tokyo"))
        .truncatedTo(java.time.temporal.ChronoUnit.MINUTES);
    String rules = """
        policies:
          - tenant: default
            timeZone: Asia/Tokyo
            rules:
              - id: local-hours
                match: {category: [marketing]}
                sendWindow:
                  allow: [{from: "%s", to: "%s"}]
        """.formatted(tokyo.minusHours(1), tokyo.plusHours(2));
    try (RealServer s = RealServer.start(rules, Map.of()); FcapClient c = FcapClient.create(options(s.url()).build())) {
      Inspection inTokyo = c.inspect(null, "zoned");
      assertThat(inTokyo.timeZone()).isEqualTo(java.time.ZoneId.of("Asia/Tokyo"));
      assertThat(inTokyo.windows()).singleElement().satisfies(w -> {
        assertThat(w.rule()).isEqualTo("local-hours");
        assertThat(w.open()).isTrue();
        assertThat(w.opensAt()).isEqualTo(inTokyo.time());
        assertThat(w.match()).isEqualTo(Map.of("category", java.util.Set.of("marketing")));
        assertThat(w.exempt()).isEmpty();
      });
      java.time.ZoneId newYork = java.time.ZoneId.of("America/New_York");
      Inspection inNewYork = c.inspect(null, "zoned", newYork);
      assertThat(inNewYork.timeZone()).isEqualTo(newYork);
      assertThat(inNewYork.windows()).singleElement().satisfies(w -> {
        assertThat(w.zone()).isEqualTo(newYork);
        assertThat(w.open()).isFalse();
        assertThat(java.time.Instant.ofEpochMilli(w.opensAt()).atZone(newYork).toLocalTime())
            .isEqualTo(tokyo.minusHours(1));
        assertThat(w.opensAt()).isBetween(inNewYork.time(), inNewYork.time() + 86_400_000L);
      });
    }
  }

  /** The core scenario, also run against a server on Redis ({@link FcapClientOnRedisIT}). */
  static void decideCheckReleaseInspectReset(FcapClient fcap) {
    Message code = Message.builder("+8613800000000").content("Your code is 1234").channel("sms").build();
    assertThat(fcap.ready()).isTrue();
    Decision first = fcap.decide(code);
    assertThat(first.allowed()).isTrue();
    assertThat(first.fallback()).isFalse();
    assertThat(first.decisionId()).isNotEmpty();
    assertThat(first.rules()).extracting(RuleOutcome::id).containsExactly("per-hour", "same-content-per-59s");
    assertThat(fcap.decide(code).allowed()).isTrue();

    Decision checked = fcap.check(code);
    assertThat(checked.allowed()).isFalse();
    Decision third = fcap.decide(code);
    assertThat(third.allowed()).isFalse();
    assertThat(third.blockedBy()).containsExactly("same-content-per-59s");
    assertThat(third.retryAfterMs()).isBetween(1L, 59_000L);

    Inspection before = fcap.inspect(null, "+8613800000000");
    assertThat(before.counters()).filteredOn(c -> c.rule().equals("per-hour")).singleElement()
        .satisfies(c -> assertThat(c.used()).isEqualTo(2));
    assertThat(before.recentDenials()).singleElement().satisfies(d -> {
      assertThat(d.blockedBy()).containsExactly("same-content-per-59s");
      assertThat(d.channel()).isEqualTo("sms");
    });

    assertThat(fcap.release(first.decisionId())).isTrue();
    assertThat(fcap.release(first.decisionId())).as("idempotent").isTrue();
    assertThat(fcap.releaseDecision(first.decisionId())).isEqualTo(new Release(true, null));
    assertThat(fcap.releaseDecision("d" + first.decisionId().substring(2))).as("garbled")
        .isEqualTo(new Release(false, "unknown"));
    assertThat(fcap.decide(code).allowed()).as("the released slot is free again").isTrue();
    assertThat(fcap.decide(code).allowed()).as("one slot, however many releases").isFalse();

    assertThat(fcap.reset(null, "+8613800000000")).isTrue();
    assertThat(fcap.inspect(null, "+8613800000000").counters()).isEmpty();
    assertThat(fcap.reset(null, "+8613800000000")).isFalse();
  }

  @Test
  void aMessageIdDecidesOnceAndReleasesByItself() {
    assumeTrue(serverKnowsMessageIds, "the server does not know messageId");
    aMessageIdDecidesOnceAndReleasesByItself(fcap);
  }

  static void aMessageIdDecidesOnceAndReleasesByItself(FcapClient fcap) {
    Message m = Message.builder("by-id").messageId("order-42").build();
    Decision first = fcap.decide(m);
    Decision again = fcap.decide(m);
    assertThat(again.decisionId()).isEqualTo(first.decisionId());
    assertThat(again.replayed()).isTrue();
    assertThat(again.messageId()).isEqualTo("order-42");
    assertThat(fcap.inspect(null, "by-id").counters().get(0).used()).isEqualTo(1);
    assertThat(fcap.release(m)).isTrue();
    assertThat(fcap.inspect(null, "by-id").counters()).allSatisfy(c -> assertThat(c.used()).isZero());
  }

  @Test
  void asyncAndBatch() throws Exception {
    CompletableFuture<Decision> a = fcap.decideAsync(Message.of("async-1"));
    CompletableFuture<Decision> b = fcap.checkAsync(Message.of("async-2"));
    assertThat(a.get(10, TimeUnit.SECONDS).allowed()).isTrue();
    assertThat(b.get(10, TimeUnit.SECONDS).allowed()).isTrue();

    List<BatchItem> items = fcap.decideAllAsync(List.of(Message.of("batch-1"),
        Message.builder("batch-2").tenant("not a tenant!").build(), Message.builder("batch-3").cost(3).build()))
        .get(10, TimeUnit.SECONDS);
    assertThat(items).hasSize(3);
    assertThat(items.get(0).orThrow().allowed()).isTrue();
    assertThat(items.get(1).isDecision()).isFalse();
    assertThat(items.get(1).error().code()).isEqualTo("invalid_field");
    assertThat(items.get(1).error().field()).isEqualTo("tenant");
    assertThat(items.get(2).orThrow().rules().get(0).used()).isZero();
    assertThat(fcap.inspect(null, "batch-3").counters().get(0).used()).isEqualTo(3);
    assertThat(fcap.resetAsync(null, "batch-3").get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(fcap.inspectAsync(null, "batch-3").get(10, TimeUnit.SECONDS).counters()).isEmpty();
    assertThat(fcap.releaseAsync("000000000000000000000000").get(10, TimeUnit.SECONDS)).isFalse();
  }

  @Test
  void aBadRequestIsAnErrorAtOnceNeverRetriedNorAFallback() throws Exception {
    try (LossyProxy proxy = new LossyProxy(server.url(), 0);
        // without an id, so that the one request is the bad one whichever server version answers
        FcapClient c = FcapClient.create(options(proxy.url()).fallback(Fallback.allow()).generateMessageIds(false)
            .build())) {
      assertThatThrownBy(() -> c.decide(Message.builder("r").cost(2_000_000_000L).build()))
          .isInstanceOfSatisfying(FcapException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.code()).isEqualTo("invalid_field");
            assertThat(e.field()).isEqualTo("cost");
            assertThat(e).isNotInstanceOf(FcapUnavailableException.class);
          });
      assertThat(proxy.requests()).isEqualTo(1);
    }
  }

  @Test
  void apiKeys() {
    String keys = "[{name: sender, sha256: " + HexFormat.of().formatHex(Authenticator.sha256("s3cret"))
        + ", tenants: ['*'], roles: [decide, read]}]";
    try (RealServer secured = RealServer.start(RealServer.RULES, Map.of("apiKeys", keys))) {
      assertThatThrownBy(() -> FcapClient.create(options(secured.url()).build()).decide(Message.of("k")))
          .isInstanceOfSatisfying(FcapException.class, e -> assertThat(e.code()).isEqualTo("unauthenticated"));
      FcapClient keyed = FcapClient.create(options(secured.url()).apiKey("s3cret").build());
      assertThat(keyed.decide(Message.of("k")).allowed()).isTrue();
      assertThatThrownBy(() -> keyed.reset(null, "k")).isInstanceOfSatisfying(FcapException.class,
          e -> assertThat(e.code()).isEqualTo("forbidden"));
    }
  }

  @Test
  void anUnreachableServerIsAnsweredByTheFallbackAndSaysSo() {
    String nobody = "http://127.0.0.1:" + RealServer.freePort();
    ClientOptions.Builder fast = ClientOptions.builder(nobody).maxAttempts(2).retryBackoff(Duration.ofMillis(5));
    Message m = Message.builder("r").category("transactional").build();

    Decision allowed = FcapClient.create(fast.fallback(Fallback.allow()).build()).decide(m);
    assertThat(allowed.allowed()).isTrue();
    assertThat(allowed.fallback()).isTrue();
    assertThat(allowed.degraded()).isTrue();
    assertThat(allowed.decisionId()).isNull();
    assertThat(allowed.messageId()).as("the generated id is reported").isNotEmpty();
    assertThat(allowed.fallbackReason()).contains("unavailable after 2 attempts");

    Decision denied = FcapClient.create(fast.fallback(Fallback.deny(30_000)).build()).decide(m);
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.retryAfterMs()).isEqualTo(30_000);

    FcapClient byCategory = FcapClient.create(fast.fallback((msg, e) -> Decision.fallback(
        "transactional".equals(msg.category()), msg, 60_000, e.getMessage())).build());
    assertThat(byCategory.decide(m).allowed()).isTrue();
    assertThat(byCategory.decide(Message.builder("r").category("marketing").build()).allowed()).isFalse();
    assertThat(byCategory.decideAll(List.of(m, Message.of("x")))).extracting(i -> i.orThrow().fallback())
        .containsExactly(true, true);

    FcapClient strict = FcapClient.create(fast.fallback(ClientOptions.DEFAULT_FALLBACK).build());
    assertThatThrownBy(() -> strict.decide(m)).isInstanceOfSatisfying(FcapUnavailableException.class,
        e -> assertThat(e.attempts()).isEqualTo(2));
    assertThatThrownBy(() -> strict.release("000000000000000000000000")).isInstanceOf(FcapUnavailableException.class);
    assertThat(strict.ready()).isFalse();
  }

  @Test
  void aServerThatDoesNotAnswerIsBoundedByTheRequestTimeout() throws Exception {
    try (LossyProxy hang = new LossyProxy(server.url(), -1)) {
      FcapClient c = FcapClient.create(ClientOptions.builder(hang.url()).requestTimeout(Duration.ofMillis(200))
          .maxAttempts(2).retryBackoff(Duration.ofMillis(5)).fallback(Fallback.deny()).build());
      Decision d = c.decide(Message.of("slow"));
      assertThat(d.fallback()).isTrue();
      assertThat(d.allowed()).isFalse();
      assertThat(d.fallbackReason()).contains("no answer within 200 ms");
      assertThat(hang.requests()).as("one request per attempt, the same message id").isEqualTo(2);
    }
  }

  @Test
  void withoutAMessageIdALostAnswerIsNotRetriedSoNothingIsCountedTwice() throws Exception {
    try (LossyProxy lossy = new LossyProxy(server.url(), 1)) {
      FcapClient c = FcapClient.create(ClientOptions.builder(lossy.url()).generateMessageIds(false).maxAttempts(5)
          .retryBackoff(Duration.ofMillis(5)).build());
      assertThatThrownBy(() -> c.decide(Message.of("lost-answer"))).isInstanceOfSatisfying(
          FcapUnavailableException.class, e -> assertThat(e.attempts()).isEqualTo(1));
      assertThat(lossy.requests()).isEqualTo(1);
      assertThat(fcap.inspect(null, "lost-answer").counters().get(0).used()).isEqualTo(1);
    }
  }

  /** A server before message ids (emulated by the proxy, which refuses the field as such a server does). */
  @Test
  void aServerWithoutMessageIdsIsDetectedOnceAndDecisionsGoOnWithoutThem() throws Exception {
    try (LossyProxy old = new LossyProxy(server.url(), 0)) {
      old.refuseMessageIds = true;
      FcapClient c = FcapClient.create(options(old.url()).build());
      Decision d = c.decide(Message.of("old-server"));
      assertThat(d.allowed()).isTrue();
      assertThat(d.messageId()).as("sent without one").isNull();
      assertThat(old.requests()).as("refused once, then asked without an id").isEqualTo(2);
      assertThat(c.decideAll(List.of(Message.of("old-server"), Message.of("old-server-2"))))
          .allSatisfy(i -> assertThat(i.orThrow().messageId()).isNull());
      assertThat(old.requests()).as("no id generated any more").isEqualTo(3);
      FcapClient fresh = FcapClient.create(options(old.url()).build());
      assertThat(fresh.decideAll(List.of(Message.of("old-server-3"))).get(0).orThrow().messageId()).isNull();
      assertThat(fcap.inspect(null, "old-server").counters().get(0).used()).as("each counted once").isEqualTo(2);
      assertThatThrownBy(() -> c.decide(Message.builder("old-server").messageId("mine").build()))
          .isInstanceOfSatisfying(FcapException.class, e -> assertThat(e.field()).isEqualTo("messageId"));
    }
  }

  @Test
  void aRetryAfterALostAnswerReusesTheMessageIdAndIsCountedOnce() throws Exception {
    assumeTrue(serverKnowsMessageIds, "the server does not know messageId");
    aRetryAfterALostAnswerReusesTheMessageIdAndIsCountedOnce(server, fcap);
  }

  static void aRetryAfterALostAnswerReusesTheMessageIdAndIsCountedOnce(RealServer server, FcapClient fcap)
      throws Exception {
    try (LossyProxy lossy = new LossyProxy(server.url(), 1)) {
      FcapClient c = FcapClient.create(ClientOptions.builder(lossy.url()).retryBackoff(Duration.ofMillis(5)).build());
      Decision d = c.decide(Message.of("retried"));
      assertThat(d.allowed()).isTrue();
      assertThat(d.fallback()).isFalse();
      assertThat(d.replayed()).as("the retry got the first decision back").isTrue();
      assertThat(lossy.requests()).as("the first answer was lost, the retry answered").isEqualTo(2);
      assertThat(fcap.inspect(null, "retried").counters().get(0).used()).isEqualTo(1);
    }
  }

  /**
   * A client deciding in a loop while its server stops (draining what is in flight) and a new one
   * starts on the same port and durable store, twice. With message ids every call gets a real decision
   * (retries bridge the gap, no fallback) and the store counted exactly the admitted ones. Without
   * them (a server that ignores message ids) a call whose connection closed under it is ambiguous and is not
   * retried: it fails, and the store counted each message at most once.
   */
  @Test
  void aServerRestartUnderTheClientLosesNothingAndCountsNothingTwice() throws Exception {
    try (RealServer restarting = RealServer.start(RealServer.RULES.replace("limit: 200,", "limit: 100000,"),
        Map.of())) {
      restartUnderTheClient(restarting, serverKnowsMessageIds);
    }
  }

  /** Decides in a loop on {@code restarting} (rules: {@code per-hour} at 100,000) while it restarts twice. */
  static void restartUnderTheClient(RealServer restarting, boolean serverKnowsMessageIds) throws Exception {
    FcapClient c = FcapClient.create(options(restarting.url()).maxAttempts(100).retryBackoff(Duration.ofMillis(10))
        .maxRetryBackoff(Duration.ofMillis(50)).requestTimeout(Duration.ofSeconds(2)).build());
    AtomicInteger done = new AtomicInteger();
    AtomicInteger admitted = new AtomicInteger();
    AtomicInteger fallbacks = new AtomicInteger();
    AtomicInteger ambiguous = new AtomicInteger();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    Thread sender = new Thread(() -> {
      try {
        // bounded: under the limit of 100,000 per hour
        for (int i = 0; !stop.get() && i < 50_000; i++) {
          try {
            Decision d = c.decide(Message.builder("restart").content("m" + i).build());
            fallbacks.addAndGet(d.fallback() ? 1 : 0);
            admitted.addAndGet(d.allowed() ? 1 : 0);
          } catch (FcapUnavailableException e) {
            if (serverKnowsMessageIds) {
              throw e;
            }
            assertThat(e.attempts()).as("an ambiguous failure without a message id is not retried").isEqualTo(1);
            ambiguous.incrementAndGet();
          }
          done.incrementAndGet();
        }
      } catch (Throwable t) {
        failed.set(t);
      }
    });
    sender.start();
    for (int restart = 0; restart < 2; restart++) {
      int before = done.get();
      await(() -> done.get() >= before + 20 || failed.get() != null);
      restarting.restart();
    }
    int after = done.get();
    await(() -> done.get() >= after + 20 || failed.get() != null);
    stop.set(true);
    sender.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(failed.get()).isNull();
    assertThat(done.get()).isBetween(60, 50_000);
    assertThat(fallbacks.get()).isZero();
    long used = c.inspect(null, "restart").counters().stream().filter(x -> x.rule().equals("per-hour")).findFirst()
        .orElseThrow().used();
    assertThat(admitted.get()).isEqualTo(done.get() - ambiguous.get());
    assertThat(used).as("each message counted once at most").isBetween((long) admitted.get(),
        (long) admitted.get() + ambiguous.get());
    if (serverKnowsMessageIds) {
      assertThat(ambiguous.get()).isZero();
      assertThat(used).isEqualTo(done.get());
    }
  }

  private static void await(java.util.function.BooleanSupplier condition) {
    Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5)).pollInSameThread()
        .until(condition::getAsBoolean);
  }
}
