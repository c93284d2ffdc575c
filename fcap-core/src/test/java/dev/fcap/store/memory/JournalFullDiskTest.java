package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.StoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal on a disk that fills up and frees again: what a {@code kill -9} at any point leaves
 * (the directory copied as it is on disk, then opened) holds every decision taken before the
 * failure once the disk has room again, never a torn entry that would hide later ones; and while
 * the journal cannot be written the store refuses, reads included, so that nothing it takes lives
 * in memory only.
 */
class JournalFullDiskTest {
  private static final CounterSpec THREE_PER_HOUR = CounterSpec.single(Algorithm.SLIDING_LOG, 3, 3_600_000, true, 0);
  /** Journal threads that run nothing: the test drives the flushes and snapshots itself. */
  private static final ThreadFactory DRIVEN_BY_THE_TEST = r -> new Thread(() -> { });

  @TempDir
  Path dir;
  @TempDir
  Path crashes;

  private final ManualClock clock = new ManualClock();
  private int crashed;

  private MemoryStore openDriven() {
    return MemoryStore.builder().clock(clock).segments(4).durable(Durability.of(dir))
        .journalThreads(DRIVEN_BY_THE_TEST).build();
  }

  private static PartitionRequest decide(String partition) {
    return PartitionRequest.of(partition.getBytes(StandardCharsets.UTF_8), Operation.DECIDE, PartitionRequest.STORE_TIME,
        1, List.of(new CounterRequest(new byte[] {1}, THREE_PER_HOUR, 0)));
  }

  private static long used(MemoryStore store, String partition) {
    return store.applyNow(decide(partition).asCheck()).used()[0];
  }

  /** The store a {@code kill -9} now would leave: the directory's files as they are, opened elsewhere. */
  private MemoryStore afterKill() throws IOException {
    Path copy = crashes.resolve("crash-" + crashed++);
    Files.createDirectories(copy);
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        if (!f.getFileName().toString().equals("lock")) {
          Files.copy(f, copy.resolve(f.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
    return MemoryStore.builder().clock(clock).segments(4).durable(Durability.of(copy)).build();
  }

  @Test
  void aFullDiskKeepsWhatWasTakenRefusesNewWritesAndWritesItAllOnceItHasRoom() throws IOException {
    MemoryStore store = openDriven();
    for (int i = 0; i < 40; i++) {
      store.applyNow(decide("before" + i));
    }
    store.journal().flushNow();
    FullDiskChannel[] disk = new FullDiskChannel[1];
    store.journal().wrapChannel(c -> disk[0] = new FullDiskChannel(c, 300)); // less than the next cycle's entries
    for (int i = 0; i < 40; i++) {
      store.applyNow(decide("taken" + i));
      store.applyNow(decide("taken" + i));
    }
    store.journal().flushNow(); // writes what fits, then the disk is full

    assertThatThrownBy(() -> store.applyNow(decide("refused"))).isInstanceOf(StoreException.class)
        .hasMessageContaining("No space left on device")
        .satisfies(e -> assertThat(((StoreException) e).reason()).isEqualTo(StoreException.Reason.UNAVAILABLE));
    assertThat(store.read("before0".getBytes(StandardCharsets.UTF_8))).isCompletedExceptionally();
    assertThat(store.delete("before0".getBytes(StandardCharsets.UTF_8))).isCompletedExceptionally();
    store.journal().flushNow(); // tries again: still full
    try (MemoryStore killed = afterKill()) {
      // the file holds whole entries only: what was written before the failure, none of the failed cycle
      assertThat(killed.recoveryProblems()).isEmpty();
      assertThat(killed.size()).isEqualTo(40);
    }

    disk[0].room = Long.MAX_VALUE; // space freed
    store.journal().flushNow();
    assertThat(store.read("before0".getBytes(StandardCharsets.UTF_8))).isCompleted();
    store.applyNow(decide("after"));
    store.journal().flushNow();
    try (MemoryStore killed = afterKill()) {
      assertThat(killed.recoveryProblems()).isEmpty();
      assertThat(killed.size()).isEqualTo(81);
      for (int i = 0; i < 40; i++) {
        assertThat(used(killed, "before" + i)).isEqualTo(1);
        assertThat(used(killed, "taken" + i)).isEqualTo(2);
      }
      assertThat(used(killed, "after")).isEqualTo(1);
      assertThat(killed.size()).isEqualTo(81); // "refused" was never taken
    }
    store.close();
  }

  @Test
  void writesDuringTheFailedFlushAndAfterItKeepTheirOrder() throws IOException {
    MemoryStore store = openDriven();
    FullDiskChannel[] disk = new FullDiskChannel[1];
    store.journal().wrapChannel(c -> disk[0] = new FullDiskChannel(c, 100));
    for (int i = 0; i < 20; i++) {
      store.applyNow(decide("p" + i));
    }
    store.journal().flushNow();
    assertThatThrownBy(() -> store.applyNow(decide("p0"))).isInstanceOf(StoreException.class);
    disk[0].room = Long.MAX_VALUE;
    store.journal().flushNow();
    // the same partitions again: their steps must come after their first records in the file
    for (int i = 0; i < 20; i++) {
      store.applyNow(decide("p" + i));
      store.applyNow(decide("p" + i));
    }
    store.journal().flushNow();
    try (MemoryStore killed = afterKill()) {
      assertThat(killed.recoveryProblems()).isEmpty();
      for (int i = 0; i < 20; i++) {
        assertThat(used(killed, "p" + i)).isEqualTo(3);
      }
    }
    store.close();
  }

  @Test
  void aFailedForceIsFollowedByASnapshotOfEverything() throws IOException {
    MemoryStore store = openDriven();
    FullDiskChannel[] disk = new FullDiskChannel[1];
    store.journal().wrapChannel(c -> disk[0] = new FullDiskChannel(c, Long.MAX_VALUE));
    for (int i = 0; i < 30; i++) {
      store.applyNow(decide("f" + i));
    }
    disk[0].failForce = true;
    store.journal().flushNow();
    assertThatThrownBy(() -> store.applyNow(decide("f0"))).isInstanceOf(StoreException.class)
        .hasMessageContaining("Input/output error");
    disk[0].failForce = false;
    store.journal().flushNow(); // written and forced again, then the journal rotates for a snapshot
    store.journal().snapshotNow();
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).anyMatch(n -> n.matches("snapshot-\\d+\\.bin"));
    }
    try (MemoryStore killed = afterKill()) {
      assertThat(killed.recoveryProblems()).isEmpty();
      assertThat(killed.size()).isEqualTo(30);
      for (int i = 0; i < 30; i++) {
        assertThat(used(killed, "f" + i)).isEqualTo(1);
      }
    }
    store.close();
  }
}
