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

  /**
   * The fingerprint of a text, hashed char by char without its UTF-8 bytes, against the hash of
   * {@code getBytes(UTF_8)}: every tail length, one- to four-byte chars, and malformed surrogates
   * (which getBytes writes as '?'). Stored keys hold these bytes, so they must never change.
   */
  @Test
  void textIsHashedAsItsUtf8Bytes() {
    char[] alphabet = {'a', 'Z', '~', '\u00e9', '\u00ff', '\u07ff', '\u0800', '\u20ac', '\uffff', '\ud83d', '\ude00',
        '\udbff', '\udfff', '\u0000'};
    java.util.SplittableRandom random = new java.util.SplittableRandom(14);
    for (int round = 0; round < 20_000; round++) {
      StringBuilder text = new StringBuilder();
      int len = round < 100 ? round : random.nextInt(80);
      for (int i = 0; i < len; i++) {
        text.append(round < 100 ? 'x' : alphabet[random.nextInt(alphabet.length)]);
      }
      String s = text.toString();
      for (int seed : new int[] {Fingerprint.CONTENT_SEED, Fingerprint.CONTENT_KEY_SEED, Fingerprint.MESSAGE_ID_SEED}) {
        byte[] out = new byte[20];
        Fingerprint.ofText(s, seed, out, 3);
        assertThat(java.util.Arrays.copyOfRange(out, 3, 19)).as("%s seed %d", s, seed)
            .isEqualTo(Fingerprint.of(s.getBytes(StandardCharsets.UTF_8), seed));
      }
      assertThat(Fingerprint.ofContent(s)).isEqualTo(Fingerprint.of(s.getBytes(StandardCharsets.UTF_8), 0));
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
