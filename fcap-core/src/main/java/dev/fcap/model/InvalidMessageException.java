package dev.fcap.model;

/** A message that cannot be decided; {@link #field()} names the offending field. Nothing is recorded for it. */
public final class InvalidMessageException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final String field;

  public InvalidMessageException(String field, String message) {
    super(message);
    this.field = field;
  }

  public String field() {
    return field;
  }
}
