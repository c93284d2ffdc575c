package dev.fcap.client;

/**
 * The server refused a request ({@link #status()} 4xx): {@link #code()} is its stable error code
 * ({@code invalid_field}, {@code unauthenticated}, ...), {@link #field()} the offending field or null.
 * Nothing was recorded. Not retried, never answered by the fallback: the request itself is wrong.
 */
public class FcapException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int status;
  private final String code;
  private final String field;

  public FcapException(int status, String code, String message, String field) {
    this(status, code, message, field, null);
  }

  FcapException(int status, String code, String message, String field, Throwable cause) {
    super(message, cause);
    this.status = status;
    this.code = code;
    this.field = field;
  }

  /** The HTTP status; 0 when no answer came. */
  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  public String field() {
    return field;
  }
}
