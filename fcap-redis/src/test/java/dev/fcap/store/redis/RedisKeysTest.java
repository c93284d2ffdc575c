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

  /** The entries hash (partition.lua names it KEYS[1] .. "\0M") is in its partition's slot and is no partition's key. */
  @Property(tries = 500)
  void theEntriesHashSharesThePartitionsSlot(@ForAll @Size(min = 1, max = 300) byte[] partition) {
    byte[] key = keys.key(partition);
    byte[] entries = RedisKeys.entries(key);
    assertThat(new String(entries, StandardCharsets.ISO_8859_1)).isEqualTo(new String(key, StandardCharsets.ISO_8859_1) + "\0M");
    assertThat(SlotHash.getSlot(entries)).isEqualTo(SlotHash.getSlot(key));
    assertThatThrownBy(() -> keys.partition(entries)).isInstanceOf(IllegalArgumentException.class);
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

  @Test
  void prefixesWithBracesAreRefused() {
    assertThatThrownBy(() -> new RedisKeys("a{b")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("keyPrefix");
    assertThatThrownBy(() -> keys.key(new byte[0])).isInstanceOf(IllegalArgumentException.class);
  }
}
