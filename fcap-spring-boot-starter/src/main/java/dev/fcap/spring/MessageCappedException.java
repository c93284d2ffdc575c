package dev.fcap.spring;

import dev.fcap.client.Decision;

/** A {@link CapBeforeSend} method was not called: fcap refused the message. */
public class MessageCappedException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final transient Decision decision;

  public MessageCappedException(Decision decision) {
    super("message capped by " + decision.blockedBy() + (decision.sendAt() > 0 ? "; send at "
        + java.time.Instant.ofEpochMilli(decision.sendAt()) + " (in " + decision.retryAfterMs() + " ms)"
        : decision.sendAt() < 0 ? "; it will never pass" : ""), null, false, false);
    this.decision = decision;
  }

  /**
   * Which rules refused it ({@code blockedBy}) and when the same message would pass ({@code sendAt},
   * {@code retryAfterMs}).
   */
  public Decision decision() {
    return decision;
  }

  /**
   * The earliest instant (epoch milliseconds) at which the same message would pass if nothing else
   * were sent, by the recipient's clock for send windows; -1 if it never will.
   */
  public long sendAt() {
    return decision.sendAt();
  }
}
