package dev.fcap.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.store.ForwardingStore;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import java.util.function.UnaryOperator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The engine on the embedded store against the {@link Oracle}, on random policies of up to 12 rules
 * and the full adversarial {@link Traffic}: every decision, release and answer field must agree, and
 * no admission may put a window over its limit. Two segments, so that many partitions share a
 * segment and its sweep. The engine takes two paths to the store, both held to the oracle: the
 * store answering on the calling thread into the thread's reused answer ({@code Store.applyInto}),
 * and the future of {@code Store.apply} that every other store answers with.
 */
class EngineOracleProperties {
  static final int STEPS = Integer.getInteger("fcap.oracle.steps", 2000);

  /* The default traffic steps the clock back too (docs/algorithms.md, "Clock steps back"). */
  @Property(tries = 30)
  void engineOnMemoryStoreAgreesWithTheOracle(@ForAll long seed) {
    check(seed, Traffic.Options.ALL, store -> store);
  }

  @Property(tries = 15)
  void engineOnMemoryStoreThroughItsFuturesAgreesWithTheOracle(@ForAll long seed) {
    check(seed, Traffic.Options.ALL, store -> new ForwardingStore(store) {});
  }

  /*
   * Send windows and local-calendar caps beside the random counters, messages in zones with daylight
   * saving and half- and quarter-hour offsets (a recipient's zone changing now and then), the clock
   * jumping to just before transitions and quarter hours, windows replaced mid-stream: verdicts,
   * every rule's outcome and sendAt must agree.
   */
  @Property(tries = 30)
  void engineWithSendWindowsAndRecipientZonesAgreesWithTheOracle(@ForAll long seed) {
    check(seed, Traffic.Options.ALL.withZones(true), store -> store);
  }

  @Property(tries = 10)
  void engineWithSendWindowsThroughItsFuturesAgreesWithTheOracle(@ForAll long seed) {
    check(seed, Traffic.Options.ALL.withZones(true), store -> new ForwardingStore(store) {});
  }

  /*
   * The synchronous path (Engine.decideNow) at the store's own clock, set to each decision's time:
   * answered on the calling thread, and through the store's futures, which it waits for. The clock
   * never steps back here: the oracle runs a release at the latest time a decision was given, as an
   * engine on caller time does (CallerTime), where at the store's time it runs at the store's clock,
   * so after a step back the two time lines part.
   */
  @Property(tries = 15)
  void engineDecidingNowAgreesWithTheOracle(@ForAll long seed) {
    checkDecidingNow(seed, store -> store);
  }

  @Property(tries = 10)
  void engineDecidingNowThroughItsFuturesAgreesWithTheOracle(@ForAll long seed) {
    checkDecidingNow(seed, store -> new ForwardingStore(store) {});
  }

  private static void checkDecidingNow(long seed, UnaryOperator<Store> path) {
    check(seed, Traffic.Options.ALL.withZones(true).withClockBack(false), path, true);
  }

  private static void check(long seed, Traffic.Options options, UnaryOperator<Store> path) {
    check(seed, options, path, false);
  }

  /** The engine on {@code path}, at caller times, or deciding now at its store's clock set to each decision's. */
  private static void check(long seed, Traffic.Options options, UnaryOperator<Store> path, boolean decidingNow) {
    Traffic traffic = new Traffic(seed, Traffic.randomPolicy(seed, 12, false, options.zones()), options,
        ManualClock.START);
    OracleRun.Report report = OracleRun.run(traffic, policy -> {
      ManualClock clock = new ManualClock();
      Engine engine = Engine.builder(path.apply(MemoryStore.builder().clock(clock).segments(2).build()))
          // the oracle releases recent decisions whatever their age: keep release records the longest
          .clock(clock).callerTime(!decidingNow).releaseHorizon(java.time.Duration.ofDays(7)).policy(policy).build();
      return decidingNow ? OracleRun.engineDecidingNow(engine, clock::set) : OracleRun.engine(engine);
    }, STEPS);
    assertThat(report.overAdmissions()).as("seed %d: %s", seed, report).isZero();
    assertThat(report.mismatches()).as("seed %d: %s", seed, report).isZero();
    assertThat(report.admitted()).isPositive();
  }
}
