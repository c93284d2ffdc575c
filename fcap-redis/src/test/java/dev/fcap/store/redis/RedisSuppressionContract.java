package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcome;
import dev.fcap.model.Suppression;
import dev.fcap.store.ManualClock;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisServer;
import dev.fcap.store.redis.testing.Resp;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Suppression lists on Redis, read in the decision's own step (one script call): a recipient in an
 * entry's scope is refused with {@code suppressed} and the reason and nothing is recorded, until the
 * entry's expiry; a message to which no rule keyed by the recipient applies reads the entry first;
 * a message id admitted before the entry is refused when asked again; a tenant's list is paged by
 * cursor and counted (on a cluster, across every master). Run on each deployment and layout by its
 * subclasses.
 */
abstract class RedisSuppressionContract {
  private static final Policy TWO_PER_DAY = new Policy("acme", 1,
      List.of(Rule.of("two-per-day", 2, Duration.ofDays(1), Dimension.RECIPIENT)));
  private static final Policy PER_CHANNEL = new Policy("acme", 1,
      List.of(Rule.of("per-channel", 100, Duration.ofDays(1), Dimension.CHANNEL)));

  private static final Policy BOTH = new Policy("acme", 1,
      List.of(Rule.of("two-per-day", 2, Duration.ofDays(1), Dimension.RECIPIENT),
          Rule.of("per-channel", 100, Duration.ofDays(1), Dimension.CHANNEL)));

  private final ManualClock clock = new ManualClock(System.currentTimeMillis());
  private RedisStore store;

  /** A store on a flushed deployment, deciding by {@code clock}. */
  abstract RedisStore newStore(ManualClock clock) throws Exception;

  /** The deployment {@link #newStore} runs on. */
  abstract RedisDeployment deployment();

  @BeforeEach
  void open() throws Exception {
    store = newStore(clock);
  }

  @AfterEach
  void close() {
    store.close();
  }

  private Engine engine(Policy policy) {
    return Engine.builder(store).clock(clock).policy(policy).build();
  }

  private static Message message(String recipient, String channel, String category) {
    return Message.builder(recipient).tenant("acme").channel(channel).category(category).build();
  }

  private Suppression entry(String recipient, List<String> channels, List<String> categories, long expiresAt) {
    return new Suppression(recipient, channels, categories, "replied STOP", "ops", clock.millis(), expiresAt);
  }

  @Test
  void aRecipientInScopeIsRefusedAndNothingIsRecorded() {
    Engine engine = engine(TWO_PER_DAY);
    SuppressionList list = engine.suppressions().orElseThrow();
    assertThat(list.checkedInStep()).isTrue();
    list.put("acme", entry("+1", List.of("sms"), List.of("marketing"), Suppression.NEVER));
    assertThat(list.get("acme", "+1").orElseThrow()).isEqualTo(entry("+1", List.of("sms"), List.of("marketing"),
        Suppression.NEVER));
    for (int i = 0; i < 3; i++) {
      Decision d = engine.decide(message("+1", "sms", "marketing")).join();
      assertThat(d.allowed()).isFalse();
      assertThat(d.blockedBy()).containsExactly(Suppression.BLOCKED_BY);
      assertThat(d.suppressedReason()).isEqualTo("replied STOP");
      assertThat(d.sendAt()).isEqualTo(-1);
      assertThat(d.rules()).extracting(RuleOutcome::used).containsExactly(0L);
    }
    // out of scope: the rules decide, and the refusals above counted nothing
    assertThat(engine.decide(message("+1", "email", "marketing")).join().allowed()).isTrue();
    assertThat(engine.decide(message("+1", "sms", "otp")).join().allowed()).isTrue();
    assertThat(engine.decide(message("+1", null, null)).join().blockedBy()).containsExactly("two-per-day");
    assertThat(list.remove("acme", "+1")).isTrue();
    assertThat(list.remove("acme", "+1")).isFalse();
    assertThat(list.get("acme", "+1")).isEmpty();
  }

  @Test
  void anExpiringEntryRefusesUntilItsExpiry() {
    Engine engine = engine(TWO_PER_DAY);
    long expires = clock.millis() + Duration.ofHours(1).toMillis();
    engine.suppressions().orElseThrow().put("acme", entry("+2", List.of(), List.of(), expires));
    Decision d = engine.decide(message("+2", "sms", null)).join();
    assertThat(d.sendAt()).isEqualTo(expires);
    assertThat(d.retryAfterMs()).isEqualTo(expires - d.time());
    clock.set(expires);
    assertThat(engine.decide(message("+2", "sms", null)).join().allowed()).isTrue();
  }

  @Test
  void aMessageNoRecipientRuleAppliesToReadsTheEntryFirst() {
    Engine engine = engine(PER_CHANNEL);
    engine.suppressions().orElseThrow().put("acme", entry("+3", List.of(), List.of(), Suppression.NEVER));
    Decision d = engine.decide(message("+3", "sms", null)).join();
    assertThat(d.blockedBy()).containsExactly(Suppression.BLOCKED_BY);
    assertThat(d.rules()).extracting(RuleOutcome::used).containsExactly(0L);
    assertThat(engine.decide(message("+4", "sms", null)).join().rules()).extracting(RuleOutcome::used)
        .as("the refusal recorded nothing in the shared partition").containsExactly(0L);
    Engine noPolicy = Engine.builder(store).clock(clock).build();
    assertThat(noPolicy.decide(message("+3", "sms", null)).join().blockedBy()).containsExactly("suppressed");
    assertThat(noPolicy.decide(message("+4", "sms", null)).join().allowed()).isTrue();
    List<Decision> batch = engine.decideAll(List.of(message("+3", "sms", null), message("+4", "sms", null)), false)
        .stream().map(f -> f.join()).toList();
    assertThat(batch).extracting(Decision::allowed).containsExactly(false, true);
  }

  @Test
  void aRecipientAndASharedPartitionRecordNothingForASuppressedRecipient() {
    Engine engine = engine(BOTH);
    engine.suppressions().orElseThrow().put("acme", entry("+7", List.of(), List.of(), Suppression.NEVER));
    Decision d = engine.decide(message("+7", "sms", null)).join();
    assertThat(d.blockedBy()).containsExactly(Suppression.BLOCKED_BY);
    assertThat(d.rules()).extracting(RuleOutcome::used).containsExactly(0L, 0L);
    Decision other = engine.decide(message("+8", "sms", null)).join();
    assertThat(other.allowed()).isTrue();
    assertThat(other.rules()).extracting(RuleOutcome::used).as("nothing was counted for +7").containsExactly(0L, 0L);
  }

  /**
   * A bucket that cannot be read (a string where a hash belongs) makes a decision that reads it
   * fail, so it shows which decisions read the list: one on a new partition does; one on a partition
   * whose last write found no entry does not, until a PUT for its recipient, which clears the mark.
   */
  @Test
  void aRecipientFoundWithoutAnEntryIsDecidedWithoutItsBucketUntilAPut() throws Exception {
    Engine engine = engine(TWO_PER_DAY);
    RedisSuppressions list = (RedisSuppressions) engine.suppressions().orElseThrow();
    byte[] partition = SuppressionList.partitionOf("acme", "+20");
    byte[] bucket = list.bucketKey("acme", list.bucket(partition));
    onMasterOf("SET", bucket, "not a bucket");
    assertThatThrownBy(() -> engine.decide(message("+20", "sms", null)).join()).as("a new partition reads the bucket")
        .isInstanceOf(CompletionException.class);
    onMasterOf("DEL", bucket);
    assertThat(timeKind(partition)).as("a refusal by error wrote nothing").isEqualTo(-1);
    assertThat(engine.decide(message("+20", "sms", null)).join().allowed()).isTrue();
    assertThat(timeKind(partition)).isEqualTo(StoredValue.CLEAR);
    onMasterOf("SET", bucket, "not a bucket");
    assertThat(engine.decide(message("+20", "email", null)).join().allowed()).as("decided without the bucket").isTrue();
    assertThat(timeKind(partition)).as("a write keeps the mark").isEqualTo(StoredValue.CLEAR);
    assertThat(engine.decide(message("+20", "email", null)).join().blockedBy()).containsExactly("two-per-day");
    onMasterOf("DEL", bucket);
    clock.advance(Duration.ofDays(1).toMillis());
    list.put("acme", entry("+20", List.of("sms"), List.of(), Suppression.NEVER));
    assertThat(timeKind(partition)).as("the PUT cleared the mark").isEqualTo(StoredValue.CLOCK);
    assertThat(engine.decide(message("+20", "sms", null)).join().blockedBy()).containsExactly(Suppression.BLOCKED_BY);
    assertThat(engine.decide(message("+20", "email", null)).join().allowed()).as("out of the entry's scope").isTrue();
    assertThat(timeKind(partition)).as("an entry out of scope is still an entry").isEqualTo(StoredValue.CLOCK);
    list.remove("acme", "+20");
    assertThat(engine.decide(message("+20", "sms", null)).join().allowed()).isTrue();
    assertThat(timeKind(partition)).as("marked again once the entry is gone").isEqualTo(StoredValue.CLEAR);
  }

  /** The kind of the time entry that opens the partition's value; -1 without a value. */
  private long timeKind(byte[] partition) throws IOException {
    RedisKeys keys = store.keys();
    byte[] key = keys.key(partition);
    return (Long) onMasterOf("EVAL", "local v = ARGV[1] == '' and redis.call('GET', KEYS[1])"
        + " or redis.call('HGET', KEYS[1], ARGV[1]) return v and string.byte(v, ARGV[1] == '' and 2 or 6) or -1",
        "1", key, keys.grouped() ? partition : new byte[0]);
  }

  /** {@code command}, whose second word is a key, on the master that holds that key. */
  private Object onMasterOf(Object... command) throws IOException {
    Resp.RespError moved = null;
    for (RedisServer master : deployment().masters()) {
      try {
        return master.call(command);
      } catch (Resp.RespError e) {
        if (!e.getMessage().contains("MOVED")) {
          throw e;
        }
        moved = e;
      }
    }
    throw new AssertionError("no master holds the key", moved);
  }

  @Test
  void aMessageIdAdmittedBeforeTheEntryIsRefusedWhenAskedAgain() {
    Engine engine = engine(TWO_PER_DAY);
    Message m = Message.builder("+5").tenant("acme").messageId("m-1").build();
    assertThat(engine.decide(m).join().allowed()).isTrue();
    engine.suppressions().orElseThrow().put("acme", entry("+5", List.of(), List.of(), Suppression.NEVER));
    Decision again = engine.decide(m).join();
    assertThat(again.allowed()).isFalse();
    assertThat(again.blockedBy()).containsExactly(Suppression.BLOCKED_BY);
    List<Decision> batch = engine.decideAll(List.of(m, message("+6", null, null)), false).stream()
        .map(f -> f.join()).toList();
    assertThat(batch).extracting(Decision::allowed).containsExactly(false, true);
  }

  @Test
  void aListIsPagedByCursorOverEveryLiveEntryOnce() {
    SuppressionList list = store.as(SuppressionList.class).orElseThrow();
    long expires = clock.millis() + Duration.ofHours(1).toMillis();
    Set<String> live = new HashSet<>();
    for (int i = 0; i < 250; i++) {
      String recipient = "+1555" + i;
      list.put("acme", entry(recipient, List.of("sms"), List.of(), i % 25 == 0 ? expires : Suppression.NEVER));
      if (i % 25 != 0) {
        live.add(recipient);
      }
    }
    list.put("other", entry("+1555777", List.of(), List.of(), Suppression.NEVER));
    assertThat(list.size("acme")).isEqualTo(250);
    Suppression sample = entry("+15551", List.of("sms"), List.of(), Suppression.NEVER);
    clock.set(expires); // 10 entries expire: listed no more, counted until a write sweeps them
    List<String> listed = new ArrayList<>();
    String cursor = null;
    for (int pages = 0; pages < 100; pages++) {
      List<Suppression> page = list.page("acme", cursor, 40);
      page.forEach(e -> listed.add(e.recipient()));
      if (page.size() < 40) {
        break;
      }
      cursor = page.get(page.size() - 1).recipient();
    }
    assertThat(listed).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(live);
    assertThat(list.page("acme", null, 1000)).extracting(Suppression::recipient).containsExactlyElementsOf(listed)
        .as("one page lists in the order of many");
    assertThat(list.page("acme", listed.get(99), 1000)).extracting(Suppression::recipient)
        .containsExactlyElementsOf(listed.subList(100, listed.size()));
    assertThat(list.page("acme", null, 1000)).as("entries come back whole").contains(sample);
    assertThat(list.size("acme")).isEqualTo(250);
    assertThat(list.remove("acme", listed.get(0))).isTrue();
    assertThat(list.size("acme")).isEqualTo(249);
    assertThat(list.page("other", null, 10)).extracting(Suppression::recipient).containsExactly("+1555777");
    assertThat(list.size("nobody")).isZero();
    assertThat(list.page("nobody", null, 10)).isEmpty();
  }

  @Test
  void aPutSweepsTheExpiredEntriesOfItsBucket() {
    RedisSuppressions list = (RedisSuppressions) store.as(SuppressionList.class).orElseThrow();
    long expires = clock.millis() + 1000;
    list.put("acme", entry("+900", List.of(), List.of(), expires));
    list.put("acme", entry("+901", List.of(), List.of(), expires + 1000));
    int bucket = list.bucket(SuppressionList.partitionOf("acme", "+900"));
    String neighbour = null;
    for (int i = 0; neighbour == null && i < 100_000_000; i++) {
      if (list.bucket(SuppressionList.partitionOf("acme", "n" + i)) == bucket) {
        neighbour = "n" + i;
      }
    }
    clock.set(expires);
    assertThat(list.get("acme", "+900")).isEmpty();
    assertThat(list.remove("acme", "+900")).as("an expired entry was not live").isFalse();
    list.put("acme", entry("+900", List.of(), List.of(), expires + 500));
    assertThat(list.size("acme")).isEqualTo(2);
    clock.set(expires + 500);
    list.put("acme", entry(neighbour, List.of(), List.of(), Suppression.NEVER));
    assertThat(list.size("acme")).as("the put swept +900, expired in its bucket").isEqualTo(2);
    assertThat(list.get("acme", "+901")).isPresent();
    assertThat(list.page("acme", null, 10)).extracting(Suppression::recipient)
        .containsExactlyInAnyOrder("+901", neighbour);
  }
}
