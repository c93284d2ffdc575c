package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FingerprintTest {

  /** Our MurmurHash3 x64-128 against Guava's independent implementation, over every tail length. */
  @Test
  void matchesAnIndependentMurmur3Implementation() {
    StringBuilder text = new StringBuilder();
    for (int len = 0; len < 70; len++) {
      byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
      byte[] guava = Hashing.murmur3_128(0).hashBytes(bytes).asBytes(); // h1, h2 little-endian
      byte[] ours = Fingerprint.of(bytes, 0); // h1, h2 big-endian
      for (int i = 0; i < 8; i++) {
        assertThat(ours[i]).as("len %d byte %d", len, i).isEqualTo(guava[7 - i]);
        assertThat(ours[8 + i]).as("len %d byte %d", len, 8 + i).isEqualTo(guava[15 - i]);
      }
      text.append((char) ('a' + len % 26));
    }
  }

  @Test
  void contentAndContentKeyNeverCollideAndDistinctTextsDiffer() {
    assertThat(Fingerprint.ofContent("T1")).isNotEqualTo(Fingerprint.ofContentKey("T1"));
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 10_000; i++) {
      assertThat(seen.add(Fingerprint.hex(Fingerprint.ofContent("Your code is " + i)))).isTrue();
    }
    assertThat(Fingerprint.hex(Fingerprint.ofContent("x"))).hasSize(32).matches("[0-9a-f]+");
  }
}
