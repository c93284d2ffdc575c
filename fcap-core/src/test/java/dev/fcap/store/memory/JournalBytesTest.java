package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.engine.Engine;
import dev.fcap.engine.Inspection;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.store.ManualClock;
import dev.fcap.store.SeedRules;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the journal writes per admission on the seed policy (a size, so a test: at most 150 bytes, a
 * decision's step rather than its partition's whole record), and that recovery rebuilds every record
 * exactly from those steps: across a snapshot taken while steps were written, with releases, resets,
 * message ids and checks among them (each replayed record is checked against the checksum of the
 * one the store made: a difference is a recovery problem).
 */
class JournalBytesTest {
  private static final ThreadFactory DRIVEN_BY_THE_TEST = r -> new Thread(() -> { });
  private static final int RECIPIENTS = 100;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock();

  private MemoryStore open() {
    return MemoryStore.builder().clock(clock).segments(4).durable(Durability.of(dir)).journalThreads(DRIVEN_BY_THE_TEST)
        .build();
  }

  private long journalBytes() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().startsWith("journal-"))
          .mapToLong(p -> p.toFile().length() - JournalFormat.HEADER).sum();
    }
  }

  private static String recipient(int r) {
    return "+1555" + (1_000_000 + r);
  }

  /** Every recipient's counters, as inspection shows them. */
  private static Map<String, Inspection> inspectAll(Engine engine) {
    Map<String, Inspection> out = new HashMap<>();
    for (int r = 0; r < RECIPIENTS; r++) {
      out.put(recipient(r), engine.inspect("default", recipient(r)).join());
    }
    return out;
  }

  @Test
  void anAdmissionOnTheSeedPolicyWritesAtMost150Bytes() throws IOException {
    MemoryStore store = open();
    Engine engine = Engine.builder(store).clock(clock).policy(SeedRules.POLICY).build();
    long decisions = 0;
    long admissions = 0;
    for (int round = 0; round < 300; round++) {
      clock.advance(250); // each recipient asked 4 times a second: hot, mostly refused after the first minute
      for (int r = 0; r < RECIPIENTS; r++) {
        Decision d = engine.decide(Message.builder(recipient(r)).content("code " + (round % 7)).build()).join();
        decisions++;
        admissions += d.allowed() ? 1 : 0;
      }
      store.journal().flushNow();
    }
    long bytes = journalBytes();
    System.out.printf("seed policy, %d hot recipients: %d decisions, %d admissions, %d journal bytes: %.1f per "
        + "admission%n", RECIPIENTS, decisions, admissions, bytes, (double) bytes / admissions);
    assertThat(admissions).isGreaterThan(RECIPIENTS * 20L);
    assertThat((double) bytes / admissions).as("journal bytes per admission").isLessThanOrEqualTo(150);

    Map<String, Inspection> before = inspectAll(engine);
    store.close();
    MemoryStore again = open();
    assertThat(again.recoveryProblems()).isEmpty();
    assertThat(inspectAll(Engine.builder(again).clock(clock).policy(SeedRules.POLICY).build())).isEqualTo(before);
    again.close();
  }

  @Test
  void recoveryRebuildsEveryRecordFromTheStepsAcrossASnapshot() {
    MemoryStore store = open();
    Engine engine = Engine.builder(store).clock(clock).policy(SeedRules.POLICY).build();
    List<String> admitted = new ArrayList<>();
    for (int round = 0; round < 120; round++) {
      clock.advance(700);
      if (round == 40) {
        store.requestSnapshot();
        store.journal().flushNow(); // journal N opens; snapshot N is asked for, not yet copied
      }
      if (round == 60) {
        store.journal().snapshotNow(); // copies the records: the steps of rounds 40-59 are in it and in journal N
      }
      for (int r = 0; r < RECIPIENTS; r++) {
        Message.Builder m = Message.builder(recipient(r)).content("code " + (round % 3));
        if (r % 10 == 1) {
          m.messageId("m" + round); // remembered decisions: inline, then in records of their own
        }
        Decision d = (r % 10 == 2 ? engine.check(m.build()) : engine.decide(m.build())).join();
        if (d.allowed() && r % 10 != 2) {
          admitted.add(d.decisionId());
        }
      }
      if (round % 10 == 5) {
        engine.release(admitted.get(admitted.size() - 1)).join();
        engine.release(admitted.get(admitted.size() / 2)).join();
        engine.reset("default", recipient(round % RECIPIENTS)).join();
      }
      if (round % 3 == 0) {
        store.journal().flushNow();
      }
    }
    Map<String, Inspection> before = inspectAll(engine);
    store.close();

    MemoryStore again = open();
    assertThat(again.recoveryProblems()).as("every step applied, to the record the store made").isEmpty();
    assertThat(inspectAll(Engine.builder(again).clock(clock).policy(SeedRules.POLICY).build())).isEqualTo(before);
    again.close();
  }

  @Test
  void stepsReplayTheirBoundsAndRelaxedChecks() {
    dev.fcap.model.Policy policy = dev.fcap.policy.PolicyParser.parse("""
        policies:
          - tenant: default
            rules:
              - {id: per-minute, limit: 6, window: 1m, key: [recipient], headroom: {normal: 2, low: 4},
                 countOnly: {category: [otp]}}
              - {id: per-day, limit: 20, window: 24h, key: [recipient], headroom: {low: 10}}
        """).get(0);
    MemoryStore store = open();
    Engine engine = Engine.builder(store).clock(clock).policy(policy).build();
    long admitted = 0;
    for (int round = 0; round < 200; round++) {
      clock.advance(900);
      for (int r = 0; r < 20; r++) {
        Message.Builder m = Message.builder(recipient(r))
            .priority(dev.fcap.model.Priority.values()[(round + r) % 4])
            .category(round % 5 == 0 ? "otp" : "marketing")
            .override(round % 17 == 3 && r % 2 == 0);
        admitted += engine.decide(m.build()).join().allowed() ? 1 : 0;
      }
      store.journal().flushNow();
    }
    assertThat(admitted).isGreaterThan(400);
    Map<String, Inspection> before = inspectAll(engine);
    store.close();
    MemoryStore again = open();
    assertThat(again.recoveryProblems()).as("each step replayed with its bounds and relaxed checks").isEmpty();
    assertThat(inspectAll(Engine.builder(again).clock(clock).policy(policy).build())).isEqualTo(before);
    again.close();
  }
}
