package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class RedisKeysTest {
  private final RedisKeys keys = new RedisKeys("fc:");

  /** The bytes Redis hashes: between the first '{' and the first '}' after it. */
  private static byte[] hashTag(byte[] key) {
    int open = -1;
    for (int i = 0; i < key.length; i++) {
      if (key[i] == '{') {
        open = i;
        break;
      }
    }
    for (int i = open + 1; i < key.length; i++) {
      if (key[i] == '}') {
        return Arrays.copyOfRange(key, open + 1, i);
      }
    }
    return key;
  }

  @Property(tries = 2000)
  void keysRoundTripSoTheyAreInjective(@ForAll @Size(min = 1, max = 300) byte[] partition) {
    byte[] key = keys.key(partition);
    assertThat(keys.partition(key)).isEqualTo(partition);
  }

  @Property(tries = 2000)
  void theHashTagIsTheWholeEscapedPartition(@ForAll @Size(min = 1, max = 300) byte[] partition) {
    byte[] key = keys.key(partition);
    byte[] tag = hashTag(key);
    assertThat(tag.length).isEqualTo(key.length - "fc:{}".length());
    assertThat(keys.partition(("fc:{" + new String(tag, StandardCharsets.ISO_8859_1) + "}")
        .getBytes(StandardCharsets.ISO_8859_1))).isEqualTo(partition);
    assertThat(SlotHash.getSlot(key)).isEqualTo(SlotHash.getSlot(tag));
  }

  /**
   * The entries hash (partition.lua names it NAME .. "\0M": the key, or in the grouped layout the
   * group's key, '\0', the field's length and the field) is in its partition's slot and is no
   * partition's or group's key.
   */
  @Property(tries = 500)
  void theEntriesHashSharesThePartitionsSlot(@ForAll @Size(min = 1, max = 300) byte[] partition) {
    byte[] key = keys.key(partition);
    byte[] entries = (new String(key, StandardCharsets.ISO_8859_1) + "\0M").getBytes(StandardCharsets.ISO_8859_1);
    assertThat(SlotHash.getSlot(entries)).isEqualTo(SlotHash.getSlot(key));
    assertThat(StoredValue.kind(new String(entries, StandardCharsets.ISO_8859_1))).isEqualTo('M');
    assertThatThrownBy(() -> keys.partition(entries)).isInstanceOf(IllegalArgumentException.class);
    String group = new String(new RedisKeys("fc:", 7).key(partition), StandardCharsets.ISO_8859_1);
    byte[] grouped = (StoredValue.groupedName(group, partition) + "\0M").getBytes(StandardCharsets.ISO_8859_1);
    assertThat(SlotHash.getSlot(grouped)).isEqualTo(SlotHash.getSlot(group.getBytes(StandardCharsets.ISO_8859_1)));
    assertThat(StoredValue.kind(new String(grouped, StandardCharsets.ISO_8859_1))).isEqualTo('M');
  }

  @Test
  void oddIdsNeitherAliasNorBreakTheTag() {
    String kb = "x".repeat(1024);
    List<String> ids = List.of("a", "{a}", "a}", "{a", "}{", "{}", "\\", "\\(", "(", "a:b", "a b", "a\tb", "ü", "手机",
        "😀", kb, kb + "}", "{" + kb, "", " ", "a\\)", "a}");
    Set<String> seen = new HashSet<>();
    for (String id : ids) {
      byte[] partition = ("r\u0007default" + id).getBytes(StandardCharsets.UTF_8);
      byte[] key = keys.key(partition);
      seen.add(new String(key, StandardCharsets.ISO_8859_1));
      assertThat(hashTag(key)).hasSize(key.length - 5);
      assertThat(keys.partition(key)).isEqualTo(partition);
    }
    assertThat(seen).hasSize(new HashSet<>(ids).size());
  }

  /** A group's key: the prefix, the group's number in the hash tag, then "G" (no partition key ends so). */
  @Property(tries = 1000)
  void aGroupedPartitionsKeyIsItsGroups(@ForAll @Size(min = 1, max = 300) byte[] partition) {
    RedisKeys grouped = new RedisKeys("fc:", 1000);
    String key = new String(grouped.key(partition), StandardCharsets.ISO_8859_1);
    assertThat(key).isEqualTo("fc:{g" + RedisKeys.group(partition, 1000) + "}G");
    assertThat(RedisKeys.group(partition, 1000)).isBetween(0, 999);
    assertThat(StoredValue.kind(key)).isEqualTo('G');
    assertThat(StoredValue.kind(new String(keys.key(partition), StandardCharsets.ISO_8859_1))).isEqualTo('V');
  }

  /**
   * The group is part of the stored layout: a different function (or count) would look for every
   * partition in another hash, forgetting every count. These values pin it.
   */
  @Test
  void theGroupFunctionDoesNotChange() {
    byte[] recipient = "r\u0007default+15550001".getBytes(StandardCharsets.UTF_8);
    assertThat(RedisKeys.group(recipient, 1 << 20)).isEqualTo(GROUP_OF_RECIPIENT);
    assertThat(RedisKeys.group(new byte[] {0}, 6_250_000)).isEqualTo(GROUP_OF_ZERO);
  }

  private static final int GROUP_OF_RECIPIENT = 717_150;
  private static final int GROUP_OF_ZERO = 5_102_267;

  /** Similar recipients (numbers that differ in their last digits) spread evenly over the groups. */
  @Test
  void similarPartitionsSpreadEvenlyOverTheGroups() {
    int groups = 64;
    int n = 64_000;
    int[] count = new int[groups];
    for (int i = 0; i < n; i++) {
      count[RedisKeys.group(("r\u0007default+1555" + (1_000_000 + i)).getBytes(StandardCharsets.UTF_8), groups)]++;
    }
    double chi2 = 0;
    for (int c : count) {
      chi2 += Math.pow(c - n / (double) groups, 2) / (n / (double) groups);
    }
    // 63 degrees of freedom: chi2 above 110 has a probability below 10^-4 for a uniform spread
    assertThat(chi2).as("chi-squared of %s", Arrays.toString(count)).isLessThan(110);
  }

  @Test
  void prefixesWithBracesAreRefused() {
    assertThatThrownBy(() -> new RedisKeys("a{b")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("keyPrefix");
    assertThatThrownBy(() -> keys.key(new byte[0])).isInstanceOf(IllegalArgumentException.class);
  }
}
