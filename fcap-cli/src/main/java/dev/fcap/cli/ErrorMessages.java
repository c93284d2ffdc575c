package dev.fcap.cli;

import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * Prints a {@link CliException} thrown by a command as one line, "fcap COMMAND: message" (the
 * subcommand of {@code fcap}, as the commands name themselves), and returns its exit code; any
 * other exception is a bug and keeps its stack trace.
 */
final class ErrorMessages implements IExecutionExceptionHandler {
  @Override
  public int handleExecutionException(Exception e, CommandLine cl, ParseResult parsed) throws Exception {
    if (!(e instanceof CliException ce)) {
      throw e;
    }
    CommandLine top = cl;
    while (top.getParent() != null && top.getParent().getParent() != null) {
      top = top.getParent();
    }
    String name = top.getParent() == null ? top.getCommandName() : "fcap " + top.getCommandName();
    cl.getErr().println(name + ": " + Printable.escape(ce.getMessage()));
    cl.getErr().flush();
    return ce.exitCode();
  }
}
