package dev.fcap.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "replay", description = "Replay a send log against a rules file.")
final class ReplayCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    return 0;
  }
}
