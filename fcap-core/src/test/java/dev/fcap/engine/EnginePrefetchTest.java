package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.ForwardingStore;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link Engine#prefetch} hands the store, for each message, exactly the partition its decision then
 * applies to (null where no rule keyed by the recipient applies), whatever the recipient's length
 * or alphabet, and a slot's reused key array never carries an earlier message's key.
 */
class EnginePrefetchTest {
  private static final Policy PER_RECIPIENT = new Policy("default", 1,
      List.of(Rule.of("per-minute", 3, Duration.ofMinutes(1), Dimension.RECIPIENT)));
  /** A tenant whose only rule is keyed by the channel: no recipient partition. */
  private static final Policy PER_CHANNEL = new Policy("channels", 1,
      List.of(Rule.of("per-channel", 1_000, Duration.ofMinutes(1), Dimension.CHANNEL)));

  /** Keeps a copy of every hint and of every request's partition. */
  private static final class Recording extends ForwardingStore {
    final List<byte[]> hinted = new ArrayList<>();
    final List<byte[]> applied = new ArrayList<>();

    Recording(Store store) {
      super(store);
    }

    @Override
    public void prefetch(byte[][] partitions, int n) {
      for (int k = 0; k < n; k++) {
        hinted.add(partitions[k] == null ? null : partitions[k].clone());
      }
      super.prefetch(partitions, n);
    }

    @Override
    public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
      applied.add(request.partition().clone());
      return super.apply(request);
    }
  }

  @Test
  void eachHintIsThePartitionItsDecisionAppliesTo() {
    Recording store = new Recording(MemoryStore.builder().build());
    Engine engine = Engine.builder(store).policies(List.of(PER_RECIPIENT, PER_CHANNEL)).build();
    String longRecipient = "+1" + "5".repeat(300); // longer than the engine's buffered keys
    Message[] messages = {
        Message.builder("+15550000001").build(),
        Message.builder("+155500000012").build(), // one longer: the slot's array is not reused whole
        Message.builder("+15550000003").build(),
        Message.builder("用户-7").build(), // not ASCII
        Message.builder(longRecipient).build(),
        Message.builder("+15550000004").tenant("channels").channel("sms").build(),
        Message.builder("+15550000005").tenant("nobody").build(), // no policy
        Message.builder("+15550000001").build(),
    };
    for (int round = 0; round < 2; round++) { // the second reuses the first's key arrays, one slot over
      int from = 1 - round;
      int to = messages.length - round;
      store.hinted.clear();
      engine.prefetch(messages, from, to); // a range, not the whole array
      assertThat(store.hinted).hasSize(to - from);
      for (int i = from; i < to; i++) {
        store.applied.clear();
        engine.decide(messages[i]).join();
        byte[] hint = store.hinted.get(i - from);
        boolean applied = store.applied.stream().anyMatch(p -> Arrays.equals(p, hint));
        if (messages[i].tenant().equals("default")) {
          assertThat(hint).as("round %d, message %d", round, i).isNotNull();
          assertThat(applied).as("round %d, message %d: the hint is a partition its decision applies to", round, i)
              .isTrue();
        } else {
          assertThat(hint).as("round %d, message %d: no rule keyed by its recipient", round, i).isNull();
        }
      }
    }
  }
}
