package dev.fcap.spring;

import dev.fcap.client.Decision;

/**
 * A {@link CapBeforeSend} method was not called: fcap refused the message, or, when it was
 * {@link #deferred()}, booked it for {@link #sendAt()} (send it then, without deciding again, or release
 * its {@code decisionId}).
 */
public class MessageCappedException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final transient Decision decision;

  public MessageCappedException(Decision decision) {
    super(describe(decision), null, false, false);
    this.decision = decision;
  }

  private static String describe(Decision d) {
    String when = d.sendAt() > 0 ? java.time.Instant.ofEpochMilli(d.sendAt()) + " (in " + d.retryAfterMs() + " ms)"
        : null;
    if (d.deferred()) {
      return "message deferred by " + d.blockedBy() + "; booked to send at " + when;
    }
    return "message capped by " + d.blockedBy() + (when != null ? "; send at " + when
        : d.sendAt() < 0 ? "; it will never pass" : "");
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
   * were sent, by the recipient's clock for send windows; -1 if it never will. When
   * {@link #deferred()}: the instant it is booked for.
   */
  public long sendAt() {
    return decision.sendAt();
  }

  /** Whether the message was booked for {@link #sendAt()} ({@link CapBeforeSend#defer()}) rather than refused. */
  public boolean deferred() {
    return decision.deferred();
  }
}
