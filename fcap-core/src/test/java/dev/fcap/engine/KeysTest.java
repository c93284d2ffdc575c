package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Dimension;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KeysTest {

  /**
   * The recipient partition key, built in one pass that assumes ASCII, against its definition
   * ('r' varint(len) tenant recipient-utf8): stored keys hold these bytes, so they must never change.
   */
  @Test
  void recipientPartitionIsItsDefinitionForAnyChars() {
    char[] alphabet = {'a', '7', '+', '\u007f', '\u0080', '\u00e9', '\u0141', '\u4e2d', '\ud83d', '\ude00'};
    SplittableRandom random = new SplittableRandom(14);
    for (int round = 0; round < 5_000; round++) {
      StringBuilder recipient = new StringBuilder();
      for (int i = random.nextInt(40); i > 0; i--) {
        recipient.append(alphabet[random.nextInt(alphabet.length)]);
      }
      String tenant = round % 2 == 0 ? "default" : "t".repeat(200); // a two-byte varint length too
      ByteArrayOutputStream expected = new ByteArrayOutputStream();
      expected.write('r');
      byte[] t = tenant.getBytes(StandardCharsets.UTF_8);
      byte[] len = new byte[5];
      expected.write(len, 0, dev.fcap.store.Varint.write(len, 0, t.length));
      expected.writeBytes(t);
      expected.writeBytes(recipient.toString().getBytes(StandardCharsets.UTF_8));
      assertThat(Keys.recipientPartition(tenant, recipient.toString())).as(recipient.toString())
          .isEqualTo(expected.toByteArray());
      // where a store that checks suppression in its step keeps the recipient's entry
      assertThat(dev.fcap.store.SuppressionList.partitionOf(tenant, recipient.toString()))
          .isEqualTo(expected.toByteArray());
    }
  }

  @Test
  void contentCounterKeyIsTheGroupIdThenTheFingerprint() {
    byte[] fingerprint = Fingerprint.ofContent("Your code is 1234");
    assertThat(Keys.contentCounterKey(0x0102030405060708L, fingerprint))
        .isEqualTo(Keys.counterKey(0x0102030405060708L, List.of(Dimension.RECIPIENT, Dimension.CONTENT), null,
            fingerprint, true));
  }
}
