package dev.fcap.store;

/**
 * A store could not do what was asked. Nothing was recorded for the failed operation. The
 * {@link Reason} lets a failure policy tell an outage from a full store.
 */
public class StoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public enum Reason {
    /** The store did not answer in time. */
    TIMEOUT,
    /** The store cannot be reached or is failing over. */
    UNAVAILABLE,
    /** The store is at its configured capacity and refuses new partitions. */
    FULL,
    /** The store answered with an error (a script error, a protocol error). */
    ERROR
  }

  private final Reason reason;

  public StoreException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  public StoreException(Reason reason, String message) {
    this(reason, message, null);
  }

  public Reason reason() {
    return reason;
  }

  /**
   * A {@link Reason#FULL} refusal that knows when a retry can first be held: no counter of the part
   * of the store the request falls in expires sooner, so nothing frees room for it before then.
   */
  public static final class Full extends StoreException {
    private static final long serialVersionUID = 1L;
    private final long retryAfterMs;

    /** {@code retryAfterMs}: the earliest delay after which room may free, or -1 if the store cannot say. */
    public Full(String message, long retryAfterMs) {
      super(Reason.FULL, message);
      this.retryAfterMs = retryAfterMs;
    }

    /** The earliest delay after which room may free (a lower bound: expiry may free too little), or -1. */
    public long retryAfterMs() {
      return retryAfterMs;
    }
  }
}
