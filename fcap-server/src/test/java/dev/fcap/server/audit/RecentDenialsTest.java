package dev.fcap.server.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.server.audit.RecentDenials.Denial;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Recent denials saved in a file: read back within the bounds, erased from it, a bad file set aside. */
class RecentDenialsTest {
  @TempDir
  Path dir;

  static Denial denial(String id, long time) {
    return new Denial(id, time, List.of("per-minute", "per-day"), "email", null);
  }

  @Test
  void aSavedFileIsReadBackInTheSameOrder() throws Exception {
    Path file = dir.resolve("recent-denials.json");
    RecentDenials before = RecentDenials.savedIn(file, 5, 10);
    before.add("default", "alice", denial("a1", 1000));
    before.add("default", "alice", denial("a2", 2000));
    before.add("acme", "alice", denial("b1", 3000));
    before.save();

    RecentDenials after = RecentDenials.savedIn(file, 5, 10);
    assertThat(after.of("default", "alice")).containsExactly(denial("a2", 2000), denial("a1", 1000));
    assertThat(after.of("acme", "alice")).containsExactly(denial("b1", 3000));
    assertThat(after.of("default", "bob")).isEmpty();
  }

  @Test
  void theBoundsApplyToWhatIsRead() throws Exception {
    Path file = dir.resolve("recent-denials.json");
    RecentDenials wide = RecentDenials.savedIn(file, 5, 10);
    for (int r = 0; r < 5; r++) {
      for (int d = 0; d < 4; d++) {
        wide.add("default", "r" + r, denial("r" + r + "-" + d, r * 10 + d));
      }
    }
    wide.save();

    RecentDenials narrow = RecentDenials.savedIn(file, 2, 3);
    assertThat(narrow.of("default", "r0")).as("least recently denied: forgotten").isEmpty();
    assertThat(narrow.of("default", "r1")).isEmpty();
    for (int r = 2; r < 5; r++) {
      assertThat(narrow.of("default", "r" + r)).extracting(Denial::decisionId)
          .containsExactly("r" + r + "-3", "r" + r + "-2");
    }
  }

  @Test
  void forgettingASavedRecipientRewritesTheFileAndAnyoneElseLeavesItAlone() throws Exception {
    Path file = dir.resolve("recent-denials.json");
    RecentDenials first = RecentDenials.savedIn(file, 5, 10);
    first.add("default", "alice", denial("a1", 1000));
    first.add("default", "bob", denial("b1", 2000));
    first.save();

    RecentDenials running = RecentDenials.savedIn(file, 5, 10);
    running.add("default", "carol", denial("c1", 3000));
    String saved = Files.readString(file);
    running.forget("default", "carol");
    assertThat(Files.readString(file)).as("carol was never saved: no rewrite").isEqualTo(saved);
    running.forget("default", "alice");
    assertThat(Files.readString(file)).doesNotContain("alice").doesNotContain("a1").contains("b1");

    // no graceful save: the file as the reset left it
    RecentDenials restarted = RecentDenials.savedIn(file, 5, 10);
    assertThat(restarted.of("default", "alice")).isEmpty();
    assertThat(restarted.of("default", "bob")).containsExactly(denial("b1", 2000));
  }

  @Test
  void aRecipientBeyondTheBoundIsStillErasedFromTheFile() throws Exception {
    Path file = dir.resolve("recent-denials.json");
    RecentDenials wide = RecentDenials.savedIn(file, 5, 10);
    wide.add("default", "alice", denial("a1", 1000));
    wide.add("default", "bob", denial("b1", 2000));
    wide.save();

    RecentDenials narrow = RecentDenials.savedIn(file, 5, 1);
    assertThat(narrow.of("default", "alice")).as("over the bound, not in memory").isEmpty();
    narrow.forget("default", "alice");
    assertThat(Files.readString(file)).doesNotContain("alice");
  }

  @Test
  void anErasureThatCannotRewriteTheFileDeletesItAndOneThatCannotDeleteItEitherFails() throws Exception {
    Path file = dir.resolve("recent-denials.json");
    RecentDenials first = RecentDenials.savedIn(file, 5, 10);
    first.add("default", "alice", denial("a1", 1000));
    first.add("default", "bob", denial("b1", 2000));
    first.save();

    // an empty directory in the file's place: no file can be renamed over it, but it can be deleted
    RecentDenials running = RecentDenials.savedIn(file, 5, 10);
    Files.delete(file);
    Files.createDirectory(file);
    running.forget("default", "alice");
    assertThat(file).as("deleted instead: the erasure holds, the others' saved denials are lost").doesNotExist();
    assertThat(running.of("default", "bob")).as("still in memory").hasSize(1);

    // a directory that is not empty can be neither replaced nor deleted
    running.save();
    RecentDenials stuck = RecentDenials.savedIn(file, 5, 10);
    Files.delete(file);
    Files.createDirectories(file.resolve("inside"));
    assertThatThrownBy(() -> stuck.forget("default", "bob")).isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining(file.toString());
    assertThat(stuck.of("default", "bob")).as("erased from memory all the same").isEmpty();
    Files.delete(file.resolve("inside"));
    stuck.forget("default", "bob");
    assertThat(file).as("forgetting again retries the file").doesNotExist();
  }

  @Test
  void aMissingFileIsEmptyAndNothingToSaveWritesNothing() throws Exception {
    Path file = dir.resolve("sub").resolve("recent-denials.json");
    RecentDenials r = RecentDenials.savedIn(file, 5, 10);
    assertThat(r.of("default", "alice")).isEmpty();
    r.save();
    assertThat(file).doesNotExist();
    r.add("default", "alice", denial("a1", 1000));
    r.save();
    assertThat(file).as("its directory created").exists();
  }

  @Test
  void aFileThatCannotBeReadIsSetAsideAndTheDenialsStartEmpty() throws Exception {
    Path file = dir.resolve("recent-denials.json");
    String valid = "{\"version\":1,\"recipients\":[{\"tenant\":\"default\",\"recipient\":\"alice\",\"denials\":"
        + "[{\"decisionId\":\"a1\",\"time\":1000,\"blockedBy\":[\"per-minute\"],\"channel\":null,\"category\":null}]}";
    for (String bad : List.of("not json", valid, valid.replace("\"version\":1", "\"version\":2") + "]}",
        valid.replace("\"time\":1000", "\"time\":\"soon\"") + "]}", valid + "]}{}")) {
      Files.writeString(file, bad);
      RecentDenials r = RecentDenials.savedIn(file, 5, 10);
      assertThat(r.of("default", "alice")).as(bad).isEmpty();
      assertThat(file).as(bad).doesNotExist();
      assertThat(dir.resolve("recent-denials.json.corrupt")).hasContent(bad);
    }
    Files.writeString(file, valid + "]}");
    assertThat(RecentDenials.savedIn(file, 5, 10).of("default", "alice")).extracting(Denial::decisionId)
        .containsExactly("a1");
  }
}
