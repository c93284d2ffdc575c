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
}
