package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.store.memory.Durability;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.time.Clock;
import java.util.List;

/** fcap: the Engine on a MemoryStore with the seed policy (exact sliding logs). */
final class FcapLimiter implements CapLimiter {
  /** The rules' verdicts of {@link #verdicts} decisions: not read, as a peer answers a boolean. */
  private static final Engine.RuleVerdicts IGNORED = (rule, admits, enforced) -> { };
  final MemoryStore store;
  final Engine engine;
  /** Whether decisions are made as an internal caller makes them: verdicts at the clock's time, no {@code Decision}. */
  private final boolean verdicts;
  private final Clock clock;

  /** On the wall clock, like the peers. */
  FcapLimiter() {
    this(Clock.system());
  }

  /** On any clock (the benchmarks' simulated one). */
  FcapLimiter(Clock clock) {
    this(clock, null);
  }

  /** On any clock, durable as {@code durability} says (null: memory only). */
  FcapLimiter(Clock clock, Durability durability) {
    this(clock, durability, false);
  }

  private FcapLimiter(Clock clock, Durability durability, boolean verdicts) {
    this(clock, durability, verdicts, SeedPolicy.load());
  }

  private FcapLimiter(Clock clock, Durability durability, boolean verdicts, List<Policy> policies) {
    MemoryStore.Builder b = MemoryStore.builder().clock(clock);
    if (durability != null) {
      b.durable(durability);
    }
    store = b.build();
    Engine.Builder e = Engine.builder(store).clock(clock).policies(policies);
    engine = (verdicts ? e.callerTime(true).releaseHorizon(java.time.Duration.ZERO) : e).build();
    this.verdicts = verdicts;
    this.clock = clock;
  }

  /**
   * On {@code clock}, deciding as the replay and other internal callers do
   * ({@link Engine#decideAt(Message, long, Engine.RuleVerdicts)}): the admission alone, as a peer
   * answers it, without the {@code Decision} (its rule outcomes, lists and id) or releases by id.
   */
  static FcapLimiter verdicts(Clock clock) {
    return new FcapLimiter(clock, null, true);
  }

  /** On {@code clock}, with the seed policy plus the recipient's send window and local-day cap ({@link LocalTimePolicy}). */
  static FcapLimiter localTime(Clock clock) {
    return new FcapLimiter(clock, null, false, List.of(LocalTimePolicy.of(SeedPolicy.load().get(0))));
  }

  @Override
  public void close() {
    store.close();
  }

  @Override
  public boolean tryAcquire(Message m) {
    return verdicts ? engine.decideAt(m, clock.millis(), IGNORED).join() : engine.decideNow(m).allowed();
  }
}
