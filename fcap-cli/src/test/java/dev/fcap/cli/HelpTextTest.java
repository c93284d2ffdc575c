package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Help text reads in whole sentences: picocli prints each description element on lines of its own,
 * so an element that stops mid-sentence shows as a sentence cut in two (and a command list shows a
 * command's first element alone).
 */
class HelpTextTest {
  @Test
  void everyCommandsSummaryAndParagraphsAreWholeSentences() {
    List<String> cut = new ArrayList<>();
    for (CommandLine sub : new CommandLine(new Fcap()).getSubcommands().values()) {
      CommandSpec spec = sub.getCommandSpec();
      List<String> texts = new ArrayList<>(List.of(spec.usageMessage().header()));
      texts.addAll(List.of(spec.usageMessage().description()));
      for (String text : texts) {
        if (!text.replace("%n", "").strip().endsWith(".")) {
          cut.add(spec.name() + ": " + text);
        }
      }
    }
    assertThat(cut).as("description lines that do not end a sentence").isEmpty();
  }

  @Test
  void everyOptionIsDescribedInOneParagraph() {
    List<String> split = new ArrayList<>();
    for (CommandLine sub : new CommandLine(new Fcap()).getSubcommands().values()) {
      for (OptionSpec o : sub.getCommandSpec().options()) {
        if (o.description().length > 1) {
          split.add(sub.getCommandName() + " " + o.longestName());
        }
      }
    }
    assertThat(split).as("options whose description is split into lines by hand").isEmpty();
  }

  @Test
  void everySubcommandPrintsTheBuildsVersion() {
    for (String sub : List.of("serve", "replay", "gen", "bench")) {
      StringWriter out = new StringWriter();
      CommandLine cl = Fcap.commandLine();
      cl.setOut(new PrintWriter(out));
      assertThat(cl.execute(sub, "--version")).isZero();
      assertThat(out.toString().trim()).as(sub).isEqualTo("fcap " + Fcap.version()).doesNotContain("$");
    }
  }

  @Test
  void theCommandListShowsReplaysWholeSummary() {
    StringWriter out = new StringWriter();
    CommandLine cl = new CommandLine(new Fcap());
    cl.setOut(new PrintWriter(out));
    assertThat(cl.execute("--help")).isZero();
    assertThat(out.toString().replaceAll("\\s+", " "))
        .contains("replay Replay a send log against a rules file and report what each rule blocked.");
  }
}
