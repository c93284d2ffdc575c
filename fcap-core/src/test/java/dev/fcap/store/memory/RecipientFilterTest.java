package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The filter before a suppression list: never a "no" for an entry, rarely a "maybe" for another recipient. */
class RecipientFilterTest {
  @Test
  void holdsEveryEntryAndAdmitsFewOthers() {
    List<String> listed = new ArrayList<>();
    for (int i = 0; i < 100_000; i++) {
      listed.add("+1666" + String.format("%07d", i));
    }
    RecipientFilter f = RecipientFilter.of(listed.size(), listed.subList(0, 50_000));
    for (String r : listed.subList(50_000, listed.size())) {
      f.add(r);
    }
    assertThat(listed).allMatch(f::mayContain);
    int maybe = 0;
    for (int i = 0; i < 100_000; i++) {
      maybe += f.mayContain("+1555" + String.format("%07d", i)) ? 1 : 0;
    }
    assertThat(maybe).as("recipients not listed that the map must answer").isLessThan(10_000);
  }
}
