package dev.fcap.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code fcap} command. Each subcommand lives in its own class beside this one. */
@Command(
    name = "fcap",
    mixinStandardHelpOptions = true,
    version = "fcap 0.1.0",
    description = "Exact frequency capping for messaging platforms.",
    subcommands = {ReplayCommand.class, GenCommand.class, ServeCommand.class, BenchCommand.class,
        CommandLine.HelpCommand.class})
public final class Fcap {

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the command line and returns the exit code (tests call this instead of main). */
  public static int run(String... args) {
    return new CommandLine(new Fcap()).execute(args);
  }
}
