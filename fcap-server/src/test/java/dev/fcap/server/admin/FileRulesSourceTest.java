package dev.fcap.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The settle logic of hand edits as a time trace on a manual clock: the watcher's looks are the
 * {@code check} calls, time moves only when the test says so.
 */
class FileRulesSourceTest {
  private static final String FOUR = """
      policies:
        - tenant: default
          rules:
            - {id: r1, limit: 1, window: 1m, key: [recipient]}
            - {id: r2, limit: 2, window: 1m, key: [recipient]}
            - {id: r3, limit: 3, window: 1m, key: [recipient]}
            - {id: r4, limit: 4, window: 1m, key: [recipient]}
      """;
  private static final String TWO = FOUR.substring(0, FOUR.indexOf("    - {id: r3"));

  @TempDir
  Path dir;
  final AtomicLong now = new AtomicLong(1_000_000);
  final List<List<Policy>> applied = new ArrayList<>();

  private FileRulesSource source(String initial) throws Exception {
    Path file = dir.resolve("rules.yaml");
    Files.writeString(file, initial);
    FileRulesSource s = new FileRulesSource(file, "builtin", now::get, Duration.ofMillis(500));
    s.load();
    return s;
  }

  /** A file written in two chunks 300 ms apart was applied half-written. */
  @Test
  void aFileWrittenInTwoChunksIsAppliedOnlyWhole() throws Exception {
    FileRulesSource s = source(FOUR.replace("limit: 4", "limit: 40"));
    Path file = dir.resolve("rules.yaml");
    Files.writeString(file, TWO); // the first chunk: valid YAML, 2 of 4 rules
    assertThat(s.check(applied::add)).isEqualTo(500);
    now.addAndGet(300);
    assertThat(s.check(applied::add)).isEqualTo(200); // still settling
    Files.writeString(file, FOUR); // the second chunk, 300 ms later
    assertThat(s.check(applied::add)).isEqualTo(500); // changed again: the settle period restarts
    now.addAndGet(499);
    assertThat(s.check(applied::add)).isEqualTo(1);
    assertThat(applied).isEmpty();
    now.addAndGet(1);
    assertThat(s.check(applied::add)).isEqualTo(-1);
    assertThat(applied).hasSize(1);
    assertThat(applied.get(0).get(0).rules()).hasSize(4);
    assertThat(s.check(applied::add)).isEqualTo(-1); // nothing new
    assertThat(applied).hasSize(1);
  }

  @Test
  void anInvalidEditIsRefusedVisiblyAndAFixClearsIt() throws Exception {
    FileRulesSource s = source(FOUR);
    Path file = dir.resolve("rules.yaml");
    Files.writeString(file, FOUR.replace("limit: 3", "limit: three"));
    s.check(applied::add);
    now.addAndGet(500);
    assertThat(s.check(applied::add)).isEqualTo(-1);
    assertThat(applied).isEmpty();
    assertThat(s.rejectedEdit()).isPresent();
    assertThat(s.rejectedEdit().get().errors().get(0).ruleId()).isEqualTo("r3");
    assertThat(s.rejectedEdit().get().time()).isEqualTo(now.get());
    assertThat(s.reloadFailures()).isEqualTo(1);
    s.check(applied::add); // the same invalid text is not refused (nor counted) twice
    assertThat(s.reloadFailures()).isEqualTo(1);
    Files.writeString(file, FOUR.replace("limit: 3", "limit: 30"));
    s.check(applied::add);
    now.addAndGet(500);
    s.check(applied::add);
    assertThat(applied).hasSize(1);
    assertThat(s.rejectedEdit()).isEmpty();
  }

  @Test
  void aRestartWithAnInvalidFileStartsOnTheLastGoodVersion() throws Exception {
    source(FOUR).close();
    Path file = dir.resolve("rules.yaml");
    assertThat(Files.readString(dir.resolve("rules.yaml.last-good"))).isEqualTo(FOUR);
    Files.writeString(file, FOUR.replace("limit: 3", "limit: three"));
    FileRulesSource restarted = new FileRulesSource(file, "builtin", now::get, Duration.ofMillis(500));
    List<Policy> policies = restarted.load();
    assertThat(policies.get(0).rules()).hasSize(4);
    assertThat(policies.get(0).rules().get(2).limit()).isEqualTo(3);
    assertThat(restarted.rejectedEdit()).isPresent();
    assertThat(Files.readString(file)).contains("three"); // the operator's file is left as it is
  }

  @Test
  void withoutALastGoodVersionAnInvalidFileStillFailsTheStart() throws Exception {
    Path file = dir.resolve("rules.yaml");
    Files.writeString(file, FOUR.replace("limit: 3", "limit: three"));
    FileRulesSource s = new FileRulesSource(file, "builtin", now::get, Duration.ofMillis(500));
    assertThatThrownBy(s::load).isInstanceOf(PolicyException.class);
  }

  /** Bytes that are not UTF-8 (0xC3 must be followed by a continuation byte). */
  private static final byte[] NOT_UTF8 = {'p', 'o', 'l', (byte) 0xC3, '(', '\n'};

  @Test
  void anEditThatIsNotUtf8IsRefusedVisibly() throws Exception {
    FileRulesSource s = source(FOUR);
    Files.write(dir.resolve("rules.yaml"), NOT_UTF8);
    s.check(applied::add);
    now.addAndGet(500);
    assertThat(s.check(applied::add)).isEqualTo(-1); // waits for the next change, no retry loop
    assertThat(applied).isEmpty();
    assertThat(s.rejectedEdit()).isPresent();
    assertThat(s.rejectedEdit().get().errors().get(0).message()).contains("not UTF-8");
    assertThat(s.reloadFailures()).isEqualTo(1);
  }

  @Test
  void aDeletedFileIsARefusedEditAndTheRulesInForceStay() throws Exception {
    FileRulesSource s = source(FOUR);
    Files.delete(dir.resolve("rules.yaml"));
    s.check(applied::add);
    now.addAndGet(500);
    assertThat(s.check(applied::add)).isEqualTo(-1);
    assertThat(applied).isEmpty();
    assertThat(s.rejectedEdit()).isPresent();
    assertThat(s.rejectedEdit().get().errors().get(0).message()).contains("does not exist");
    Files.writeString(dir.resolve("rules.yaml"), FOUR); // put back: settles and applies like any edit
    assertThat(s.check(applied::add)).isEqualTo(500);
    now.addAndGet(500);
    assertThat(s.check(applied::add)).isEqualTo(-1);
    assertThat(s.rejectedEdit()).isEmpty();
    assertThat(applied).singleElement().satisfies(p -> assertThat(p.get(0).rules()).hasSize(4));
  }

  @Test
  void aStartWithTheFileGoneTakesItsLastGoodVersionNotTheSeed() throws Exception {
    source(TWO).close(); // in force: TWO, kept as the last good version
    Files.delete(dir.resolve("rules.yaml"));
    FileRulesSource again = new FileRulesSource(dir.resolve("rules.yaml"), "builtin", now::get, Duration.ofMillis(500));
    assertThat(again.load().get(0).rules()).hasSize(2);
    assertThat(Files.readString(dir.resolve("rules.yaml"))).isEqualTo(TWO);
  }

  @Test
  void aStartWithAFileThatIsNotUtf8TakesItsLastGoodVersion() throws Exception {
    source(TWO).close();
    Files.write(dir.resolve("rules.yaml"), NOT_UTF8);
    FileRulesSource again = new FileRulesSource(dir.resolve("rules.yaml"), "builtin", now::get, Duration.ofMillis(500));
    assertThat(again.load().get(0).rules()).hasSize(2);
    assertThat(again.rejectedEdit().orElseThrow().errors().get(0).message()).contains("not UTF-8");
  }

  @Test
  void aRulesFileThatIsADirectoryIsNamedWhenItCannotBeRead() throws Exception {
    Files.createDirectories(dir.resolve("rules.yaml"));
    FileRulesSource s = new FileRulesSource(dir.resolve("rules.yaml"), "builtin", now::get, Duration.ofMillis(500));
    assertThatThrownBy(s::load).hasMessageContaining("cannot read the rules file " + dir.resolve("rules.yaml"));
  }
}
