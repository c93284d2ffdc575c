package dev.fcap.engine;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A message booked for later in one counter of a recipient, as {@code inspect} shows it: a deferred
 * decision recorded it at {@code time}, where it counts in every window that contains that instant.
 *
 * @param rules the rules that read the counter it is booked in, in policy order
 * @param values the counter's key values besides the recipient (as {@link CounterView#values()})
 * @param time the instant it is booked for (epoch ms), after the inspection's time
 * @param cost the cost it counts
 */
public record BookedView(List<String> rules, Map<String, String> values, long time, long cost) {
  public BookedView {
    rules = List.copyOf(rules);
    values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
  }
}
