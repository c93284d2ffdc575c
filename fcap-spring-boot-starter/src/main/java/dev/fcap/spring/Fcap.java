package dev.fcap.spring;

import dev.fcap.client.Decision;
import dev.fcap.client.Message;

/**
 * Frequency capping for a Spring application: the same API whether decisions are made by an fcap
 * server ({@code fcap.url}) or by an engine inside the application ({@code fcap.rules}). The bean the
 * starter provides; {@link CapBeforeSend} uses it too.
 */
public interface Fcap {

  /** Decides and, if admitted, counts the message. */
  Decision decide(Message message);

  /** What {@link #decide} would answer now, counting nothing. */
  Decision check(Message message);

  /** Gives back what an admitted decision counted (the send failed). */
  boolean release(String decisionId);

  /** Whether decisions are made normally (the server and its store answer). */
  boolean ready();

  /** {@code client} or {@code embedded}. */
  String mode();

  /**
   * Decide before send: runs {@code send} only if the message is admitted; if {@code send} throws,
   * the decision is released (the message did not go out, so it must not count) and the exception
   * propagates. Returns the decision either way.
   */
  default Decision sendIfAllowed(Message message, Runnable send) {
    Decision d = decide(message);
    if (d.allowed()) {
      try {
        send.run();
      } catch (RuntimeException | Error e) {
        if (d.decisionId() != null) {
          release(d.decisionId());
        }
        throw e;
      }
    }
    return d;
  }
}
