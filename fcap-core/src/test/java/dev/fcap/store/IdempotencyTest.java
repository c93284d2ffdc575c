package dev.fcap.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * A decision that may be stored as nothing reads its candidate incarnation from its key when asked,
 * so one instance follows a key array rewritten for each decision; given incarnations stay as given.
 */
class IdempotencyTest {
  private static final byte[] TAIL = {1};

  @Test
  void theCandidateIsTheKeysFirstEightBytesAsTheyAreWhenAsked() {
    byte[] key = new byte[16];
    Idempotency id = Idempotency.storedAsNothing(key, 60_000, TAIL);
    assertThat(id.incarnation()).as("all zero: never 0").isEqualTo(1);
    key[7] = 5;
    key[8] = 9; // past the first 8 bytes: not read
    assertThat(id.incarnation()).isEqualTo(5);
    key[0] = (byte) 0x80;
    assertThat(id.incarnation()).isEqualTo(0x8000_0000_0000_0005L);
    assertThat(id.replayable()).isFalse();
    assertThat(new Idempotency(key, 60_000, TAIL, false, 42).incarnation()).as("given").isEqualTo(42);
    assertThat(new Idempotency(key, 60_000, TAIL, true).incarnation()).isZero();
  }

  @Test
  void anIncarnationInTheKeyIsNeitherGivenApartNorReplayable() {
    byte[] key = new byte[16];
    assertThatThrownBy(() -> new Idempotency(key, 1, TAIL, false, 7, true)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Idempotency(key, 1, TAIL, true, 0, true)).isInstanceOf(IllegalArgumentException.class);
  }
}
