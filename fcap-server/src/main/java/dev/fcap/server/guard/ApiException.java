package dev.fcap.server.guard;

import java.util.List;

/**
 * A request the server refuses: an HTTP status, a stable machine-readable {@link #code()}, a message
 * that says what to fix, and the offending {@link #field()} (null when no single field is at fault).
 * Both the HTTP and the gRPC API render it; nothing is recorded for a refused request.
 */
public final class ApiException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int status;
  private final String code;
  private final String field;
  private final transient List<?> details;

  public ApiException(int status, String code, String message, String field) {
    this(status, code, message, field, List.of());
  }

  public ApiException(int status, String code, String message, String field, List<?> details) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.field = field;
    this.details = List.copyOf(details);
  }

  public static ApiException badRequest(String code, String message, String field) {
    return new ApiException(400, code, message, field);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  public String field() {
    return field;
  }

  /** Further errors (e.g. every {@code PolicyError} of a refused policy). */
  public List<?> details() {
    return details;
  }
}
