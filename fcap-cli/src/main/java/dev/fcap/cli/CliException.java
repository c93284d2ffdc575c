package dev.fcap.cli;

/**
 * A failure a command reports as one line on stderr, "fcap COMMAND: message", with its exit code
 * ({@link ErrorMessages} prints it): 2 for a usage error (a bad option value, a file that cannot be
 * opened), 1 for a failure at run time (the output cannot be written).
 */
final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int exitCode;

  private CliException(String message, int exitCode) {
    super(message);
    this.exitCode = exitCode;
  }

  /** A bad option or argument: exit code 2. */
  static CliException usage(String message) {
    return new CliException(message, 2);
  }

  /** A failure while running (a write that failed): exit code 1. */
  static CliException failed(String message) {
    return new CliException(message, 1);
  }

  int exitCode() {
    return exitCode;
  }
}
