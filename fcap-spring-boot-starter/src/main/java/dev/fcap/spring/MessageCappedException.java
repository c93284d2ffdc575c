package dev.fcap.spring;

import dev.fcap.client.Decision;

/** A {@link CapBeforeSend} method was not called: fcap refused the message. */
public class MessageCappedException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final transient Decision decision;

  public MessageCappedException(Decision decision) {
    super("message capped by " + decision.blockedBy() + (decision.retryAfterMs() > 0 ? "; retry in "
        + decision.retryAfterMs() + " ms" : ""), null, false, false);
    this.decision = decision;
  }

  /** Which rules refused it ({@code blockedBy}) and when the same message would pass ({@code retryAfterMs}). */
  public Decision decision() {
    return decision;
  }
}
