package dev.fcap.server.audit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.RuleOutcome;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditLogTest {
  @TempDir
  Path dir;

  static Decision denied(String id) {
    return new Decision(false, id, 1000, List.of("per-minute"), List.of(), List.of(new RuleOutcome("per-minute", 2,
        60_000, 2, 0, false, true, 1000, 1_700_000_001_000L)), false, 1_700_000_000_000L, 3, false,
        1_700_000_001_000L);
  }

  @Test
  void aStuckSinkNeverBlocksAndDropsAreCounted() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AuditSink stuck = new AuditSink() {
      @Override
      public void write(List<AuditEvent> events) {
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }

      @Override
      public void close() {}
    };
    AuditLog log = new AuditLog(stuck, 0, 10, new RecentDenials(5, 100));
    Message m = Message.builder("r").build();
    for (int i = 0; i < 1000; i++) {
      log.decision(m, denied("d" + i), "test");
    }
    // at most one event, the batch the writer drained (10) and a refilled queue (10) are taken; the rest is
    // dropped and counted, and the loop above finished although the sink never returned
    assertThat(log.dropped()).isGreaterThanOrEqualTo(1000 - 21);
    assertThat(log.recent().of("default", "r")).hasSize(5);
    assertThat(log.recent().of("default", "r").get(0).decisionId()).isEqualTo("d999");
    release.countDown();
    log.close();
  }

  @Test
  void fileSinkWritesJsonLinesRotatesAndFlushesOnClose() throws IOException {
    Path file = dir.resolve("audit.jsonl");
    AuditLog log = new AuditLog(new FileAuditSink(file, 2_000, 2), 1.0, 1000, new RecentDenials(1, 10));
    Message m = Message.builder("+8613800000000").channel("sms").build();
    for (int i = 0; i < 30; i++) {
      log.decision(m, denied("id" + i), "key-a");
    }
    log.close();
    assertThat(log.dropped()).isZero();
    assertThat(log.written()).isEqualTo(30);
    List<String> lines = Files.readAllLines(file);
    assertThat(lines).isNotEmpty().allSatisfy(l -> assertThat(l).startsWith("{\"type\":\"denied\"").endsWith("}"));
    assertThat(lines.get(lines.size() - 1)).contains("\"decisionId\":\"id29\"").contains("\"who\":\"key-a\"")
        .contains("\"counts\":{\"per-minute\":{\"used\":2,\"limit\":2}}").contains("\"policyVersion\":3");
    assertThat(Files.size(file)).isLessThanOrEqualTo(2_000);
    assertThat(dir.resolve("audit.jsonl.1")).exists();
    assertThat(dir.resolve("audit.jsonl.2")).exists();
    assertThat(dir.resolve("audit.jsonl.3")).doesNotExist();
  }

  @Test
  void admissionsAreSampled() {
    AuditLog none = new AuditLog(AuditSink.none(), 0, 10, new RecentDenials(1, 10));
    Decision ok = new Decision(true, "a", 0, List.of(), List.of(), List.of(), false, 1, 1, false, 0);
    for (int i = 0; i < 100; i++) {
      none.decision(Message.builder("r").build(), ok, "k");
    }
    none.close();
    assertThat(none.written() + none.dropped()).isZero();
  }
}
