package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Decision ids outlive the build that sealed them: one handed out before an upgrade is released
 * after it, by another node. So the sealed form is pinned here, byte for byte, as the first release
 * (`ae836e3`) sealed it; a change to it must keep opening the old form.
 */
class DecisionIdFormatTest {
  private static final DecisionIds.Sealer SEALER =
      new DecisionIds.Sealer("fcap decision-id golden secret".getBytes(StandardCharsets.US_ASCII));

  private static byte[] plain() {
    byte[] plain = new byte[46]; // expiry 4, record key 16, a partition key of 26
    for (int i = 0; i < plain.length; i++) {
      plain[i] = (byte) (i * 7 + 3);
    }
    return plain;
  }

  @Test
  void anIdIsSealedAsTheFirstReleaseSealedIt() {
    assertThat(SEALER.seal(plain()))
        .isEqualTo("dCKBVR_OgWa0pcMqTZ-hTWfpY_K1V_PTfmTenotY4WMV2RAC3Lp763ScfiidRcjev4a9rz314baDWVQ");
  }

  @Test
  void everySealedIdOpensToItsPlainTextAndAnAlteredOneDoesNot() {
    SplittableRandom random = new SplittableRandom(42);
    for (int n = 0; n < 500; n++) {
      byte[] plain = new byte[20 + random.nextInt(300)];
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
