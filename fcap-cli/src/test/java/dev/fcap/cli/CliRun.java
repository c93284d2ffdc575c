package dev.fcap.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** One run of the {@code fcap} command in-process, with what it printed. */
record CliRun(int exit, String out, String err) {

  static CliRun fcap(String... args) {
    StringWriter out = new StringWriter();
    CliRun run = fcapTo(new PrintWriter(out, true), args);
    return new CliRun(run.exit(), out.toString(), run.err());
  }

  /** A run whose standard output is {@code out} (then {@link #out()} is empty). */
  static CliRun fcapTo(PrintWriter out, String... args) {
    StringWriter err = new StringWriter();
    CommandLine cli = Fcap.commandLine();
    cli.setOut(out);
    cli.setErr(new PrintWriter(err, true));
    int exit = cli.execute(args);
    return new CliRun(exit, "", err.toString());
  }
}
