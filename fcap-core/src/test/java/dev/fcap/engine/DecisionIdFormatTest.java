package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Decision ids outlive the build that sealed them: one handed out before an upgrade is released
 * after it, by another node. So the seal ({@code 'e'}) is pinned here, byte for byte; a change to it
 * takes a new letter, and must keep opening what was sealed before.
 */
class DecisionIdFormatTest {
  private static final IdSealer SEALER =
      new IdSealer("fcap decision-id golden secret".getBytes(StandardCharsets.US_ASCII));

  private static byte[] plain() {
    byte[] plain = new byte[46]; // expiry 4, record key 16, a partition key of 26
    for (int i = 0; i < plain.length; i++) {
      plain[i] = (byte) (i * 7 + 3);
    }
    return plain;
  }

  @Test
  void anIdIsSealedAsThisSealSealedItFirst() {
    String id = SEALER.seal(plain());
    assertThat(id).isEqualTo("e4q6LSWK8Lqz_51XQLBtSNd_7VGswIbDzYh27yJ2seyGaFGywx8NkRJIZ2kVV9wYKc4AruAGaOqGZCA");
    assertThat(SEALER.open("d" + id.substring(1))).as("read with the earlier seal").isNull();
  }

  /** RFC 4493, section 4: AES-CMAC of the empty message, of one block, of 40 bytes and of four blocks. */
  @Test
  void theMacIsAesCmac() {
    HexFormat hex = HexFormat.of();
    IdSealer rfc = new IdSealer(hex.parseHex("2b7e151628aed2a6abf7158809cf4f3c"), new byte[16]);
    String m = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
        + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
    assertThat(hex.formatHex(rfc.cmac(new byte[0]))).isEqualTo("bb1d6929e95937287fa37d129b756746");
    assertThat(hex.formatHex(rfc.cmac(hex.parseHex(m.substring(0, 32))))).isEqualTo("070a16b46b4d4144f79bdd9dd04a287c");
    assertThat(hex.formatHex(rfc.cmac(hex.parseHex(m.substring(0, 80))))).isEqualTo("dfa66747de9ae63030ca32611497c827");
    assertThat(hex.formatHex(rfc.cmac(hex.parseHex(m)))).isEqualTo("51f0bebf7e3b9d92fc49741779363cfe");
  }

  /** An id is the CMAC's first 12 bytes, then the plain text under the JDK's AES-CTR from them. */
  @Test
  void theSealIsTheCmacThenAesCtrUnderIt() throws Exception {
    SplittableRandom random = new SplittableRandom(5);
    byte[] macKey = new byte[16];
    byte[] ctrKey = new byte[16];
    random.nextBytes(macKey);
    random.nextBytes(ctrKey);
    IdSealer sealer = new IdSealer(macKey, ctrKey);
    for (int length : new int[] {1, 15, 16, 17, 90, 1000}) {
      byte[] plain = new byte[length];
      random.nextBytes(plain);
      byte[] raw = Base64.getUrlDecoder().decode(sealer.seal(plain).substring(1));
      byte[] iv = Arrays.copyOf(sealer.cmac(plain), IdSealer.IV);
      Cipher ctr = Cipher.getInstance("AES/CTR/NoPadding");
      ctr.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(ctrKey, "AES"), new IvParameterSpec(Arrays.copyOf(iv, 16)));
      assertThat(Arrays.copyOf(raw, IdSealer.IV)).isEqualTo(iv);
      assertThat(Arrays.copyOfRange(raw, IdSealer.IV, raw.length)).isEqualTo(ctr.doFinal(plain));
    }
  }

  /** Each thread seals in scratch arrays of its own: threads sealing at once get every id right. */
  @Test
  void threadsSealingAtOnceGetTheIdsOneThreadGets() throws Exception {
    SplittableRandom random = new SplittableRandom(11);
    byte[][] plains = new byte[4_000][];
    String[] expected = new String[plains.length];
    for (int i = 0; i < plains.length; i++) {
      plains[i] = new byte[1 + random.nextInt(i % 10 == 0 ? 1_500 : 120)]; // some grow the scratch mid-run
      random.nextBytes(plains[i]);
      expected[i] = SEALER.seal(plains[i]);
    }
    IdSealer shared = new IdSealer("fcap decision-id golden secret".getBytes(StandardCharsets.US_ASCII));
    var pool = java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      List<java.util.concurrent.Future<Integer>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int offset = t;
        done.add(pool.submit(() -> {
          int wrong = 0;
          for (int n = 0; n < plains.length; n++) {
            int i = (n * 7 + offset * 1_000) % plains.length;
            String id = shared.seal(plains[i]);
            wrong += id.equals(expected[i]) && Arrays.equals(shared.open(id), plains[i]) ? 0 : 1;
          }
          return wrong;
        }));
      }
      for (var d : done) {
        assertThat(d.get()).as("ids sealed or opened wrong on one thread").isZero();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** The id is written without the JDK's encoder: the same characters, for every length. */
  @Test
  void theIdIsBase64UrlOfTheSealedBytes() {
    SplittableRandom random = new SplittableRandom(3);
    for (int length = 0; length < 200; length++) {
      byte[] plain = new byte[length];
      random.nextBytes(plain);
      String id = SEALER.seal(plain);
      byte[] raw = Base64.getUrlDecoder().decode(id.substring(1));
      assertThat(id).isEqualTo("e" + Base64.getUrlEncoder().withoutPadding().encodeToString(raw));
      assertThat(raw).hasSize(IdSealer.IV + length);
      assertThat(id).hasSize(IdSealer.idLength(length));
    }
  }

  @Test
  void everySealedIdOpensToItsPlainTextAndAnAlteredOneDoesNot() {
    SplittableRandom random = new SplittableRandom(42);
    for (int n = 0; n < 500; n++) {
      byte[] plain = new byte[1 + random.nextInt(600)]; // past the scratch arrays' first size
      random.nextBytes(plain);
      String id = SEALER.seal(plain);
      assertThat(SEALER.open(id)).isEqualTo(plain);
      char[] altered = id.toCharArray();
      // not the last character: unpadded base64 leaves some of its bits unused, so it may name the same bytes
      int at = 1 + random.nextInt(altered.length - 2);
      altered[at] = altered[at] == 'A' ? 'B' : 'A';
      assertThat(SEALER.open(new String(altered))).as("one character changed").isNull();
    }
  }

  @Test
  void bothFormsOpenToWhatTheySealed() {
    DecisionIds ids = new DecisionIds(dev.fcap.store.memory.MemoryStore.builder().build());
    ids.load().join();
    byte[] partition = Keys.recipientPartition("default", "+15550001234");
    byte[] key = new byte[16];
    new SplittableRandom(7).nextBytes(key);
    long expiresAt = 1_800_000_000_000L; // whole seconds: an id keeps the expiry to the second

    DecisionIds.Opened first = ids.open(ids.seal(partition, key, expiresAt));
    assertThat(first.partition()).isEqualTo(partition);
    assertThat(first.recordKey()).isEqualTo(key);
    assertThat(first.expiresAtMs()).isEqualTo(expiresAt);
    assertThat(first.tenant()).isEqualTo("default");
    assertThat(first.tail()).as("the first form: the release is in the record").isNull();

    byte[] tail = {1, 1, 1, 3, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0};
    DecisionIds.Opened second = ids.open(ids.seal(partition, key, expiresAt, expiresAt - 86_400_123L, tail));
    assertThat(second.partition()).isEqualTo(partition);
    assertThat(second.recordKey()).isEqualTo(key);
    assertThat(second.expiresAtMs()).isEqualTo(expiresAt);
    assertThat(second.tenant()).isEqualTo("default");
    assertThat(second.decidedAt()).isEqualTo(expiresAt - 86_400_123L);
    assertThat(second.tail()).isEqualTo(tail);
    assertThat(second.incarnation()).as("the second form names no incarnation").isZero();

    DecisionIds.Opened third = ids.open(ids.seal(partition, key, expiresAt, expiresAt - 86_400_123L, -42L, tail));
    assertThat(third.partition()).isEqualTo(partition);
    assertThat(third.recordKey()).isEqualTo(key);
    assertThat(third.expiresAtMs()).isEqualTo(expiresAt);
    assertThat(third.decidedAt()).isEqualTo(expiresAt - 86_400_123L);
    assertThat(third.incarnation()).isEqualTo(-42L);
    assertThat(third.tail()).isEqualTo(tail);
  }

  @Test
  void theSecondFormIsUsedOnlyWhereTheIdStaysWithinItsMaximumLength() {
    assertThat(DecisionIds.sealsRelease(30, 60)).isTrue();
    assertThat(DecisionIds.sealsRelease(2_000, 1_000)).isFalse();
    // the largest accepted one seals to at most MAX_LENGTH characters
    int tail = 1;
    while (DecisionIds.sealsRelease(100, tail + 1)) {
      tail++;
    }
    DecisionIds ids = new DecisionIds(dev.fcap.store.memory.MemoryStore.builder().build());
    ids.load().join();
    byte[] partition = new byte[100];
    partition[0] = Keys.RECIPIENT_PARTITION;
    partition[1] = 1;
    partition[2] = 'd';
    // the third form, 8 bytes longer than the second: the bound is the third's
    String id = ids.seal(partition, new byte[16], 1_800_000_000_000L, 0, 1L, new byte[tail]);
    assertThat(id.length()).isLessThanOrEqualTo(DecisionIds.MAX_LENGTH).isGreaterThan(DecisionIds.MAX_LENGTH - 8);
  }
}
