package dev.fcap.examples;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.store.memory.MemoryStore;
import java.time.Duration;
import java.util.List;

/**
 * fcap in-process, the seed policy built in code: no server, no Jackson, nothing but fcap-core.
 * Run it (README, "From a Java service: three ways, shortest first"):
 *
 * <pre>
 * ./mvnw -B -q test-compile -pl fcap-core
 * java -cp fcap-core/target/classes:fcap-core/target/test-classes dev.fcap.examples.EmbeddedExample
 * </pre>
 */
public final class EmbeddedExample {
  private EmbeddedExample() {}

  public static void main(String[] args) {
    System.out.println(String.join("\n", run()));
  }

  /** Three identical one-time passwords to one recipient: the third is refused. */
  static List<String> run() {
    Policy policy = new Policy("default", 1, List.of(
        Rule.of("recipient-per-minute", 15, Duration.ofMinutes(1), Dimension.RECIPIENT),
        Rule.of("recipient-per-day", 50, Duration.ofHours(24), Dimension.RECIPIENT),
        Rule.of("same-content-per-59s", 2, Duration.ofSeconds(59), Dimension.RECIPIENT, Dimension.CONTENT),
        Rule.of("same-content-per-59m", 5, Duration.ofMinutes(59), Dimension.RECIPIENT, Dimension.CONTENT)));
    try (Engine engine = Engine.builder(MemoryStore.builder().build()).policy(policy).build()) {
      Message otp = Message.builder("+8613800000000").content("Your code is 1234").build();
      List<String> out = new java.util.ArrayList<>();
      for (int i = 1; i <= 3; i++) {
        Decision d = engine.decideNow(otp);
        out.add("message " + i + ": " + (d.allowed() ? "send" : "blocked by " + d.blockedBy() + ", retry in "
            + d.retryAfterMs() + " ms"));
      }
      return out;
    }
  }
}
