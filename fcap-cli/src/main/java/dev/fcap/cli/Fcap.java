package dev.fcap.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code fcap} command. Each subcommand lives in its own class beside this one. */
@Command(
    name = "fcap",
    mixinStandardHelpOptions = true,
    versionProvider = Fcap.BuildVersion.class,
    description = "Exact frequency capping for messaging platforms.",
    subcommands = {ReplayCommand.class, GenCommand.class, ServeCommand.class, BenchCommand.class, SuppressCommand.class,
        CommandLine.HelpCommand.class})
public final class Fcap {

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the command line and returns the exit code (tests call this instead of main). */
  public static int run(String... args) {
    return commandLine().setOut(CliOutput.stdout()).execute(args);
  }

  /**
   * The command line, every subcommand printing the same version as {@code fcap --version}, and a
   * command's {@link CliException} printed as one line ({@link ErrorMessages}).
   */
  static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Fcap());
    cl.setExecutionExceptionHandler(new ErrorMessages());
    cl.getSubcommands().values().forEach(sub -> sub.getCommandSpec().versionProvider(new BuildVersion()));
    return cl;
  }

  /** The version the build wrote into {@code fcap/version.properties} (a filtered resource). */
  static String version() {
    try (InputStream in = Fcap.class.getResourceAsStream("/fcap/version.properties")) {
      if (in == null) {
        throw new IllegalStateException("fcap/version.properties is missing from the class path: rebuild fcap-cli");
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static final class BuildVersion implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"fcap " + version()};
    }
  }
}
