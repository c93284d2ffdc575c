package dev.fcap.server.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Decision traffic rotates its own file: the administration's events are never rotated out by it. A
 * deferred denial's line says so, with the instant it was booked for; any other line says nothing of it.
 */
class FileAuditSinkTest {
  @TempDir
  Path dir;

  private static AuditEvent decision(int i) {
    return new AuditEvent("denied", 1_000L + i, "d" + i, "default", "+1555" + i, "sms", null,
        List.of("recipient-per-minute"), List.of(), Map.of("recipient-per-minute", new long[] {15, 15}), 1, false,
        null, null, null);
  }

  private static AuditEvent ruleChange(int version) {
    return new AuditEvent("rules", 2_000L + version, null, "default", null, null, null, null, null, null, version,
        false, "admin-key", "replace", null);
  }

  @Test
  void ruleChangesSurviveAFloodOfDecisionsThatRotatesTheDecisionFile() throws Exception {
    Path file = dir.resolve("audit.jsonl");
    try (FileAuditSink sink = new FileAuditSink(file, 2_000, 2)) {
      for (int round = 1; round <= 3; round++) {
        sink.write(List.of(ruleChange(round)));
        List<AuditEvent> flood = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
          flood.add(decision(round * 1000 + i));
        }
        sink.write(flood);
      }
    }
    assertThat(dir.resolve("audit.jsonl.2")).as("the decisions rotated past their files").exists();
    assertThat(dir.resolve("audit.jsonl.3")).doesNotExist();
    Path admin = FileAuditSink.adminFileOf(file);
    assertThat(admin).isEqualTo(dir.resolve("audit.admin.jsonl"));
    List<String> kept = Files.readAllLines(admin);
    assertThat(kept).hasSize(3).allMatch(l -> l.contains("\"type\":\"rules\""));
    assertThat(String.join("\n", Files.readAllLines(file))).doesNotContain("\"rules\"").contains("\"denied\"");
  }

  @Test
  void aDeferredDenialIsWrittenWithItsSendAtAndAnyOtherWithoutIt() throws Exception {
    AuditEvent plain = decision(1);
    AuditEvent booked = new AuditEvent("denied", 1_000L, "d2", "default", "+15552", "sms", null,
        List.of("recipient-per-minute"), List.of(), Map.of("recipient-per-minute", new long[] {15, 15}), 1, false,
        null, null, null, true, 61_000L);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    FileAuditSink.encode(booked, out);
    var line = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.toByteArray());
    assertThat(line.get("deferred").asBoolean()).isTrue();
    assertThat(line.get("sendAt").asLong()).isEqualTo(61_000L);
    out.reset();
    FileAuditSink.encode(plain, out);
    assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8)).doesNotContain("deferred", "sendAt");
  }

  @Test
  void anAuditFileWithoutAnExtensionGetsAnAdminSiblingToo() {
    assertThat(FileAuditSink.adminFileOf(Path.of("/var/lib/fcap/audit"))).isEqualTo(Path.of("/var/lib/fcap/audit.admin"));
  }
}
