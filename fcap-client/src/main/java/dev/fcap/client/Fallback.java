package dev.fcap.client;

/**
 * What a decision is when the server cannot be asked (after every retry). The result is marked:
 * {@link Decision#fallback()} true, {@link Decision#degraded()} true, {@link Decision#fallbackReason()}.
 *
 * <p>Choose by what a wrong answer costs: {@link #allow()} for messages that must go out (one-time
 * passwords: a cap must never block them), {@link #deny()} for marketing (better late than over the
 * cap), {@link #fail()} (the default) to let the caller decide from the exception, or a lambda that
 * looks at the message, e.g. {@code (m, e) -> Decision.fallback("transactional".equals(m.category()), m,
 * 60_000, e.getMessage())}.
 */
@FunctionalInterface
public interface Fallback {

  /** The decision for {@code message}; may throw {@code cause} to give up. */
  Decision decide(Message message, FcapUnavailableException cause);

  /** Admit: the message goes out uncounted. */
  static Fallback allow() {
    return (m, e) -> Decision.fallback(true, m, 0, e.getMessage());
  }

  /** Refuse, with a retry after {@code retryAfterMs}. */
  static Fallback deny(long retryAfterMs) {
    return (m, e) -> Decision.fallback(false, m, retryAfterMs, e.getMessage());
  }

  /** Refuse, with a retry after one minute. */
  static Fallback deny() {
    return deny(60_000);
  }

  /** No fallback: the call fails with the {@link FcapUnavailableException}. */
  static Fallback fail() {
    return (m, e) -> {
      throw e;
    };
  }
}
