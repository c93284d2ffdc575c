package dev.fcap.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.store.ManualClock;
import dev.fcap.store.memory.MemoryStore;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ManyRecipients} on the embedded store with two segments: every recipient gets exactly the limit. */
class ManyRecipientsConcurrencyTest {
  @Test
  void everyRecipientGetsExactlyTheLimitWhileTheStoreSweepsAndGrows() throws Exception {
    ManualClock clock = new ManualClock();
    // no grace for clock steps back: the 1-second counters are swept within the 40 s of the run
    MemoryStore store = MemoryStore.builder().clock(clock).segments(2).clockStepGrace(java.time.Duration.ZERO).build();
    Engine engine = Engine.builder(store).clock(clock).policies(List.of(ManyRecipients.HOT, ManyRecipients.CHURN)).build();
    int recipients = 300;
    int threads = 8;
    int perThread = 4000;
    long[] admitted = ManyRecipients.run(engine, clock, threads, recipients, perThread);
    // 32,000 churn partitions went through two segments (their tables grew), and the sweep dropped
    // expired ones while the hot recipients were decided: fewer are held than were ever added
    assertThat(store.size()).isGreaterThanOrEqualTo(recipients).isLessThan(recipients + (long) threads * perThread);
    for (int r = 0; r < recipients; r++) {
      assertThat(admitted[r]).as("hot-%d", r).isEqualTo(ManyRecipients.LIMIT);
      assertThat(engine.inspect("hot", "hot-" + r).join().counters()).singleElement()
          .satisfies(c -> assertThat(c.used()).isEqualTo(ManyRecipients.LIMIT));
    }
    engine.close();
  }
}
