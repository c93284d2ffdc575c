package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fcap serve} as a real process: the recent denials that inspect shows survive a graceful
 * restart; a reset erases a recipient's from the data directory before it answers, so a kill -9 right
 * after it never brings them back; a file of recent denials that cannot be read never stops a start.
 */
class RecentDenialsRestartIT {
  @TempDir
  Path tmp;

  @Test
  void recentDenialsSurviveAGracefulRestart() throws Exception {
    Path work = Files.createDirectory(tmp.resolve("work"));
    JsonNode alice;
    JsonNode bob;
    try (ServerProcess s = ServerProcess.start(work)) {
      deny(s, "alice", 3);
      deny(s, "bob", 1);
      alice = recentDenials(s, "alice");
      bob = recentDenials(s, "bob");
      assertThat(alice).hasSize(3);
      s.stop();
    }
    assertThat(work.resolve("data/recent-denials.json")).exists();
    try (ServerProcess s = ServerProcess.start(work)) {
      assertThat(recentDenials(s, "alice")).as("ids, times and blockedBy, newest first").isEqualTo(alice);
      assertThat(recentDenials(s, "bob")).isEqualTo(bob);
      assertThat(alice.get(0).path("blockedBy").toString()).contains("recipient-per-minute");
    }
  }

  @Test
  void aResetRecipientsDenialsNeverComeBackAfterAKill() throws Exception {
    Path work = Files.createDirectory(tmp.resolve("work"));
    JsonNode bob;
    try (ServerProcess s = ServerProcess.start(work)) {
      deny(s, "alice", 2);
      deny(s, "bob", 2);
      bob = recentDenials(s, "bob");
      s.stop();
    }
    try (ServerProcess s = ServerProcess.start(work)) {
      assertThat(recentDenials(s, "alice")).hasSize(2);
      deny(s, "carol", 1);
      HttpResponse<String> reset = s.http.send(HttpRequest.newBuilder(URI.create(s.base + "/v1/recipients/alice"))
          .timeout(Duration.ofSeconds(10)).DELETE().build(), HttpResponse.BodyHandlers.ofString());
      assertThat(reset.statusCode()).as(reset.body()).isEqualTo(200);
      assertThat(recentDenials(s, "alice")).isEmpty();
      s.kill();
    }
    assertThat(Files.readString(work.resolve("data/recent-denials.json"))).doesNotContain("alice");
    try (ServerProcess s = ServerProcess.start(work)) {
      assertThat(recentDenials(s, "alice")).as("erased before the reset answered").isEmpty();
      assertThat(recentDenials(s, "bob")).as("saved at the graceful stop, kept by the reset").isEqualTo(bob);
      assertThat(recentDenials(s, "carol")).as("saved by the reset's rewrite").hasSize(1);
    }
  }

  @Test
  void aDenialsFileThatCannotBeReadIsSetAsideAndTheServerStarts() throws Exception {
    Path work = Files.createDirectory(tmp.resolve("work"));
    Path file = Files.createDirectories(work.resolve("data")).resolve("recent-denials.json");
    Files.writeString(file, "{\"version\": 1, \"recipients\": [{\"tenant\": \"default\", \"recip");
    Path data = work.resolve("data").toRealPath();
    try (ServerProcess s = ServerProcess.start(work)) {
      assertThat(s.output()).contains("cannot read the recent denials in " + data.resolve("recent-denials.json"))
          .contains("moved it to " + data.resolve("recent-denials.json.corrupt"));
      assertThat(work.resolve("data/recent-denials.json.corrupt")).hasContent(
          "{\"version\": 1, \"recipients\": [{\"tenant\": \"default\", \"recip");
      assertThat(file).doesNotExist();
      assertThat(recentDenials(s, "alice")).isEmpty();
      deny(s, "alice", 1);
      s.stop();
    }
    try (ServerProcess s = ServerProcess.start(work)) {
      assertThat(recentDenials(s, "alice")).hasSize(1);
    }
  }

  /** Decides for {@code recipient} until {@code denials} more were denied (the seed policy: 15 a minute). */
  private static void deny(ServerProcess s, String recipient, int denials) throws Exception {
    int denied = 0;
    for (int i = 0; i < 60 && denied < denials; i++) {
      if (!s.post("/v1/decisions", "{\"recipient\": \"" + recipient + "\"}").path("allowed").asBoolean()) {
        denied++;
      }
    }
    assertThat(denied).as("denials of " + recipient).isEqualTo(denials);
  }

  private static JsonNode recentDenials(ServerProcess s, String recipient) throws Exception {
    return s.get("/v1/recipients/" + recipient).path("recentDenials");
  }
}
