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
}
