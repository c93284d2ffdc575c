package dev.fcap.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A campaign deferred at once, for servers on any store: {@code recipients} recipients get
 * {@code perRecipient} messages each, over 4 contents, every one asking to be deferred, spread over
 * {@code batches} batch bodies ({@code POST /v1/decisions/batch}) so that the batches race for each
 * recipient's slots. {@link #assertNoWindowBroken} then "sends" every message at its instant (the
 * decision's time if admitted, its {@code sendAt} if booked) and checks the sends against every rule
 * of the seed policy, window by window.
 */
public final class DeferredCampaign {
  /** The seed policy: {limit, window ms, keyed by content too (1) or not (0)}. */
  private static final long[][] SEED_RULES = {{15, 60_000, 0}, {50, 86_400_000, 0}, {2, 59_000, 1}, {5, 3_540_000, 1}};

  /** What a server answered for one message. */
  public record Answer(boolean allowed, boolean deferred, long time, long sendAt) {}

  private final List<String[]> messages = new ArrayList<>(); // {recipient, content}, in send order
  private final List<List<String>> batches = new ArrayList<>();

  public DeferredCampaign(int recipients, int perRecipient, int batches) {
    for (int b = 0; b < batches; b++) {
      this.batches.add(new ArrayList<>());
    }
    for (int i = 0; i < recipients * perRecipient; i++) {
      String recipient = "+1555" + (1_000_000 + i % recipients);
      String content = "offer " + (i / recipients) % 4;
      messages.add(new String[] {recipient, content});
      this.batches.get(i % batches).add("{\"recipient\": \"" + recipient + "\", \"content\": \"" + content
          + "\", \"defer\": true}");
    }
  }

  /** Batch {@code b}'s request body. */
  public String batchBody(int b) {
    return "{\"requests\": [" + String.join(",", batches.get(b)) + "]}";
  }

  public int batches() {
    return batches.size();
  }

  /** Message {@code i} is item {@code i / batches()} of batch {@code i % batches()}. */
  public int size() {
    return messages.size();
  }

  /**
   * Every message admitted or booked, and, sent at those instants, no recipient over any seed rule in
   * any window. Returns how many were booked.
   */
  public int assertNoWindowBroken(List<Answer> answers) {
    assertThat(answers).hasSize(messages.size());
    Map<String, List<Long>> sends = new HashMap<>(); // per recipient, and per recipient and content
    int booked = 0;
    for (int i = 0; i < messages.size(); i++) {
      Answer a = answers.get(i);
      assertThat(a.allowed() || a.deferred()).as("message %d is admitted or booked: %s", i, a).isTrue();
      long at = a.allowed() ? a.time() : a.sendAt();
      booked += a.deferred() ? 1 : 0;
      sends.computeIfAbsent(messages.get(i)[0], k -> new ArrayList<>()).add(at);
      sends.computeIfAbsent(messages.get(i)[0] + "\u0000" + messages.get(i)[1], k -> new ArrayList<>()).add(at);
    }
    for (Map.Entry<String, List<Long>> e : sends.entrySet()) {
      boolean byContent = e.getKey().contains("\u0000");
      for (long[] rule : SEED_RULES) {
        if ((rule[2] == 1) == byContent) {
          assertThat(fullestWindow(e.getValue(), rule[1])).as("%s, %d per %d ms", e.getKey(), rule[0], rule[1])
              .isLessThanOrEqualTo(rule[0]);
        }
      }
    }
    return booked;
  }

  /** The most sends any window (s - W, s] holds: some window ending at a send holds the most. */
  private static long fullestWindow(List<Long> sends, long window) {
    List<Long> sorted = new ArrayList<>(sends);
    Collections.sort(sorted);
    long most = 0;
    int from = 0;
    for (int to = 0; to < sorted.size(); to++) {
      while (sorted.get(from) <= sorted.get(to) - window) {
        from++;
      }
      most = Math.max(most, to - from + 1);
    }
    return most;
  }
}
