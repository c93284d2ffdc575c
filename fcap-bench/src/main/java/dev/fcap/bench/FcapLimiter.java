package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.store.Clock;
import dev.fcap.store.memory.Durability;
import dev.fcap.store.memory.MemoryStore;

/** fcap: the Engine on a MemoryStore with the seed policy (exact sliding logs). */
final class FcapLimiter implements CapLimiter {
  final MemoryStore store;
  final Engine engine;

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
    MemoryStore.Builder b = MemoryStore.builder().clock(clock);
    if (durability != null) {
      b.durable(durability);
    }
    store = b.build();
    engine = Engine.builder(store).clock(clock).policies(SeedPolicy.load()).build();
  }

  @Override
  public void close() {
    store.close();
  }

  @Override
  public boolean tryAcquire(Message m) {
    return engine.decide(m).join().allowed();
  }
}
