package dev.fcap.bench;

import dev.fcap.engine.Engine;
import dev.fcap.model.Message;
import dev.fcap.store.Clock;
import dev.fcap.store.memory.MemoryStore;

/** fcap: the Engine on a MemoryStore with the seed policy, exact sliding logs, wall clock. */
final class FcapLimiter implements CapLimiter {
  final MemoryStore store;
  final Engine engine;

  FcapLimiter() {
    store = MemoryStore.builder().clock(Clock.system()).build();
    engine = Engine.builder(store).clock(Clock.system()).policies(SeedPolicy.load()).build();
  }

  @Override
  public boolean tryAcquire(Message m) {
    return engine.decide(m).join().allowed();
  }
}
