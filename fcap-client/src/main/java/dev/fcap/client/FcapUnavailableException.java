package dev.fcap.client;

/**
 * The server could not be asked: unreachable, too slow ({@link ClientOptions#requestTimeout()}), or
 * answering 429/502/503/504, on every one of {@link #attempts()} attempts. The cause is the last
 * attempt's failure. For decisions, the {@link Fallback} decides what this means.
 */
public final class FcapUnavailableException extends FcapException {
  private static final long serialVersionUID = 1L;
  private final int attempts;

  FcapUnavailableException(int status, String code, String message, int attempts, Throwable cause) {
    super(status, code, message, null, cause);
    this.attempts = attempts;
  }

  public int attempts() {
    return attempts;
  }
}
