package dev.fcap.model;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * A conjunction over selectable dimensions: a message satisfies the condition iff, for every listed
 * dimension, its value is one of the listed values. A message without a value for a listed
 * dimension does not satisfy it. The empty condition is satisfied by every message.
 */
public record Condition(Map<Dimension, Set<String>> values) {

  public static final Condition ANY = new Condition(Map.of());

  public Condition {
    Map<Dimension, Set<String>> copy = new LinkedHashMap<>();
    values.forEach((d, v) -> {
      if (!d.selectable()) {
        throw new IllegalArgumentException(d + " cannot be used in a condition");
      }
      copy.put(d, Collections.unmodifiableSet(new LinkedHashSet<>(v)));
    });
    values = Collections.unmodifiableMap(copy);
  }

  public boolean isEmpty() {
    return values.isEmpty();
  }

  public boolean test(Message message) {
    for (Map.Entry<Dimension, Set<String>> e : values.entrySet()) {
      String v = e.getKey().valueOf(message);
      if (v == null || !e.getValue().contains(v)) {
        return false;
      }
    }
    return true;
  }
}
