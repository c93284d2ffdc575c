package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.oracle.ManyRecipients;
import dev.fcap.store.ManualClock;
import dev.fcap.store.redis.testing.RedisExtension;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link ManyRecipients} on a 3-master Redis Cluster: every recipient gets exactly the limit. */
class RedisManyRecipientsIT {
  @RegisterExtension
  static final RedisExtension CLUSTER = RedisExtension.cluster();

  @Test
  void everyRecipientGetsExactlyTheLimitOnACluster() throws Exception {
    ManualClock clock = new ManualClock();
    Engine engine = Engine.builder(RedisStore.builder(CLUSTER.uri()).clock(clock).build()).clock(clock)
        .policies(List.of(ManyRecipients.HOT, ManyRecipients.CHURN)).build();
    int recipients = 100;
    long[] admitted = ManyRecipients.run(engine, clock, 8, recipients, 600);
    for (int r = 0; r < recipients; r++) {
      assertThat(admitted[r]).as("hot-%d", r).isEqualTo(ManyRecipients.LIMIT);
    }
    engine.close();
  }
}
