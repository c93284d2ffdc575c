package dev.fcap.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Algorithm;
import dev.fcap.model.Condition;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The bitset selection of {@link CompiledPolicy} names exactly the rules a brute-force reading of each
 * rule says apply (it matches, it is not exempt, the message has its key's values), for policies of
 * every size the selection path distinguishes: at most 10 rules (plans by mask), one word (up to 64)
 * and several words (up to 150).
 */
class SelectionProperties {
  private static final List<Dimension> SELECTABLE = List.of(Dimension.CHANNEL, Dimension.SENDER,
      Dimension.CATEGORY, Dimension.attribute("region"));
  private static final String[] VALUES = {"a", "b", "c"};

  @Property(tries = 60)
  void theSelectedRulesAreTheOnesThatApply(@ForAll long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int n = switch (random.nextInt(3)) {
      case 0 -> random.nextInt(11);
      case 1 -> 11 + random.nextInt(54);
      default -> 65 + random.nextInt(86);
    };
    List<Rule> rules = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      List<Dimension> key = new ArrayList<>(List.of(Dimension.RECIPIENT));
      if (random.nextInt(4) == 0) {
        key.add(random.nextBoolean() ? Dimension.CONTENT : SELECTABLE.get(random.nextInt(SELECTABLE.size())));
      }
      rules.add(new Rule("r" + i, null, 5, Duration.ofMinutes(1), key, condition(random), condition(random),
          Algorithm.SLIDING_LOG, 0, Mode.ENFORCE, null));
    }
    CompiledPolicy compiled = new CompiledPolicy(new Policy("t", 1, rules));
    for (int k = 0; k < 200; k++) {
      Message m = message(random);
      int[] expected = IntStream.range(0, n).filter(i -> applies(rules.get(i), m)).toArray();
      assertThat(compiled.plan(m).rules).as("%d rules, %s", n, m).containsExactly(expected);
    }
  }

  private static boolean applies(Rule r, Message m) {
    for (Dimension d : r.key()) {
      if (d.equals(Dimension.CONTENT) ? m.content() == null && m.contentKey() == null : d.valueOf(m) == null) {
        return false;
      }
    }
    return r.appliesTo(m);
  }

  private static Condition condition(SplittableRandom random) {
    if (random.nextInt(3) != 0) {
      return null;
    }
    Map<Dimension, Set<String>> values = new HashMap<>();
    for (int d = 1 + random.nextInt(2); d > 0; d--) {
      Set<String> set = new HashSet<>();
      for (int v = 1 + random.nextInt(2); v > 0; v--) {
        set.add(VALUES[random.nextInt(VALUES.length)]);
      }
      values.put(SELECTABLE.get(random.nextInt(SELECTABLE.size())), set);
    }
    return new Condition(values);
  }

  private static Message message(SplittableRandom random) {
    Message.Builder b = Message.builder("u" + random.nextInt(5)).tenant("t");
    if (random.nextInt(5) != 0) {
      b.channel(VALUES[random.nextInt(VALUES.length)]);
    }
    if (random.nextInt(5) != 0) {
      b.sender(VALUES[random.nextInt(VALUES.length)]);
    }
    if (random.nextInt(5) != 0) {
      b.category(VALUES[random.nextInt(VALUES.length)]);
    }
    if (random.nextInt(3) != 0) {
      b.attribute("region", VALUES[random.nextInt(VALUES.length)]);
    }
    if (random.nextBoolean()) {
      b.content("hello");
    }
    return b.build();
  }
}
