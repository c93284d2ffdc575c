package dev.fcap.store.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.model.Algorithm;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.ManualClock;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The durable store's journal and snapshots: what a restart brings back, and what a damaged file
 * costs (the intact prefix is recovered, the damage is reported, the store always opens).
 */
class JournalTest {
  private static final CounterSpec THREE_PER_HOUR = CounterSpec.single(Algorithm.SLIDING_LOG, 3, 3_600_000, true, 0);

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock();

  /** Journal threads that run nothing: the test drives the flushes and snapshots itself. */
  private static final ThreadFactory DRIVEN_BY_THE_TEST = r -> new Thread(() -> { });

  private MemoryStore open(Durability d) {
    return MemoryStore.builder().clock(clock).segments(4).durable(d).build();
  }

  private MemoryStore openDriven(Durability d) {
    return MemoryStore.builder().clock(clock).segments(4).durable(d).journalThreads(DRIVEN_BY_THE_TEST).build();
  }

  /** What the journal's two threads would do after {@link MemoryStore#requestSnapshot()}, done now. */
  private static void snapshotNow(MemoryStore store) {
    store.journal().flushNow(); // the flusher's cycle: journal N opens, snapshot N is asked for
    store.journal().snapshotNow();
  }

  private static PartitionRequest decide(String partition) {
    return PartitionRequest.of(partition.getBytes(StandardCharsets.UTF_8), Operation.DECIDE, PartitionRequest.STORE_TIME,
        1, List.of(new CounterRequest(new byte[] {1}, THREE_PER_HOUR, 0)));
  }

  /** How many more decisions the partition admits now (3 minus what it holds). */
  private static int room(MemoryStore store, String partition) {
    PartitionRequest check = decide(partition).asCheck();
    return (int) (3 - store.applyNow(check).used()[0]);
  }

  @Test
  void aGracefulCloseLosesNothing() {
    MemoryStore store = open(Durability.of(dir));
    for (int i = 0; i < 300; i++) {
      store.applyNow(decide("r" + (i % 100)));
    }
    store.applyNow(decide("gone"));
    store.delete("gone".getBytes(StandardCharsets.UTF_8)).join();
    store.close();

    MemoryStore again = open(Durability.of(dir));
    assertThat(again.size()).isEqualTo(100);
    for (int i = 0; i < 100; i++) {
      assertThat(room(again, "r" + i)).isZero();
      assertThat(again.applyNow(decide("r" + i)).allowed()).isFalse();
    }
    assertThat(room(again, "gone")).isEqualTo(3);
    assertThat(again.recoveryProblems()).isEmpty();
    again.close();
  }

  @Test
  void countersThatExpiredWhileStoppedAreNotLoaded() {
    MemoryStore store = open(Durability.of(dir));
    store.applyNow(decide("a"));
    store.close();
    clock.advance(Duration.ofHours(2).toMillis());
    MemoryStore again = open(Durability.of(dir));
    assertThat(again.size()).isZero();
    assertThat(room(again, "a")).isEqualTo(3);
    again.close();
  }

  @Test
  void everyWriteModeHasTheEntryOnDiskWhenTheFutureCompletes() throws IOException {
    MemoryStore store = open(Durability.everyWrite(dir));
    for (int i = 0; i < 20; i++) {
      assertThat(store.apply(decide("p" + i)).join().allowed()).isTrue();
    }
    // a crash now: copy the directory as it is on disk, without closing the store
    Path copy = Files.createTempDirectory(dir.getParent(), "crash-copy");
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(f -> !f.getFileName().toString().equals("lock")).toList()) {
        Files.copy(f, copy.resolve(f.getFileName()));
      }
    }
    MemoryStore recovered = open(Durability.everyWrite(copy));
    assertThat(recovered.size()).isEqualTo(20);
    assertThat(room(recovered, "p7")).isEqualTo(2);
    recovered.close();
    store.close();
  }

  @Test
  void aTruncatedJournalTailIsReportedAndThePrefixRecovered() throws IOException {
    MemoryStore store = open(Durability.of(dir));
    for (int i = 0; i < 50; i++) {
      store.applyNow(decide("r" + i));
    }
    store.close();
    Path journal = onlyJournal();
    long size = Files.size(journal);
    try (RandomAccessFile f = new RandomAccessFile(journal.toFile(), "rw")) {
      f.setLength(size - 5); // cut the last entry
    }
    MemoryStore again = open(Durability.of(dir));
    assertThat(again.size()).isEqualTo(49);
    assertThat(again.recoveryProblems()).singleElement().asString().contains("truncated");
    assertThat(again.recoveryReport().orElseThrow()).contains("DAMAGED").contains("recovered 49 partitions");
    // the store works, and a second restart keeps what was recovered plus what came after
    again.applyNow(decide("after"));
    again.close();
    MemoryStore third = open(Durability.of(dir));
    assertThat(third.size()).isEqualTo(50);
    assertThat(room(third, "after")).isEqualTo(2);
    third.close();
  }

  @Test
  void aCorruptEntryIsDetectedByItsChecksum() throws IOException {
    MemoryStore store = open(Durability.of(dir));
    for (int i = 0; i < 50; i++) {
      store.applyNow(decide("r" + i));
    }
    store.close();
    Path journal = onlyJournal();
    long size = Files.size(journal);
    try (RandomAccessFile f = new RandomAccessFile(journal.toFile(), "rw")) {
      long at = JournalFormat.HEADER + (size - JournalFormat.HEADER) / 2; // inside some entry in the middle
      f.seek(at);
      int b = f.read();
      f.seek(at);
      f.write(b ^ 0x5a);
    }
    MemoryStore again = open(Durability.of(dir));
    assertThat(again.recoveryProblems()).singleElement().asString().containsAnyOf("corrupt", "truncated");
    assertThat(again.size()).isBetween(20L, 26L); // the entries before the damaged one
    again.close();
  }

  @Test
  void garbageInTheDirectoryNeverStopsAStart() throws IOException {
    Files.write(dir.resolve("journal-0000000001.log"), "not a journal at all".getBytes(StandardCharsets.UTF_8));
    Files.write(dir.resolve("snapshot-0000000002.tmp"), new byte[] {1, 2, 3});
    MemoryStore store = open(Durability.of(dir));
    assertThat(store.recoveryProblems()).singleElement().asString().contains("bad magic");
    assertThat(store.applyNow(decide("x")).allowed()).isTrue();
    store.close();
    assertThat(dir.resolve("snapshot-0000000002.tmp")).doesNotExist();
  }

  @Test
  void aSnapshotSupersedesOlderJournalsAndKeepsEverything() throws Exception {
    MemoryStore store = openDriven(Durability.of(dir));
    for (int i = 0; i < 200; i++) {
      store.applyNow(decide("r" + (i % 100)));
    }
    store.requestSnapshot();
    snapshotNow(store);
    assertThat(snapshots()).hasSize(1);
    // writes after the snapshot land in the newer journal
    for (int i = 0; i < 100; i++) {
      store.applyNow(decide("r" + i));
    }
    store.applyNow(decide("late"));
    store.close();
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("journal"))).hasSize(1);
    }
    MemoryStore again = open(Durability.of(dir));
    assertThat(again.recoveryProblems()).isEmpty();
    assertThat(again.size()).isEqualTo(101);
    for (int i = 0; i < 100; i++) {
      assertThat(room(again, "r" + i)).as("r%d", i).isZero();
    }
    assertThat(room(again, "late")).isEqualTo(2);
    again.close();
  }

  // ---------------------------------------------------------------------------------------------
  // Large sliding logs (above LargeLog.LARGE_FROM entries: held beside the records, not in them)

  private static final CounterSpec FIVE_THOUSAND_PER_HOUR =
      CounterSpec.single(Algorithm.SLIDING_LOG, 5_000, 3_600_000, true, 0);

  private static PartitionRequest decideLarge(String partition) {
    return PartitionRequest.of(partition.getBytes(StandardCharsets.UTF_8), Operation.DECIDE, PartitionRequest.STORE_TIME,
        1, List.of(new CounterRequest(new byte[] {7}, FIVE_THOUSAND_PER_HOUR, 0)));
  }

  /** What the partition's large log holds now. */
  private static long usedLarge(MemoryStore store, String partition) {
    return store.applyNow(decideLarge(partition).asCheck()).used()[0];
  }

  /** Decides {@code n} messages on the large log, one per millisecond; all must be admitted. */
  private void admitLarge(MemoryStore store, String partition, int n) {
    for (int i = 0; i < n; i++) {
      assertThat(store.applyNow(decideLarge(partition)).allowed()).isTrue();
      clock.advance(1);
    }
  }

  @Test
  void aLargeLogSurvivesAGracefulClose() {
    MemoryStore store = open(Durability.of(dir));
    admitLarge(store, "channel", 2_000);
    admitLarge(store, "other", 1_500);
    store.close();

    MemoryStore again = open(Durability.of(dir));
    assertThat(again.recoveryProblems()).isEmpty();
    assertThat(usedLarge(again, "channel")).isEqualTo(2_000);
    assertThat(usedLarge(again, "other")).isEqualTo(1_500);
    // and it keeps counting from there: 3,000 more fill it, the next is refused
    admitLarge(again, "channel", 3_000);
    assertThat(again.applyNow(decideLarge("channel")).allowed()).isFalse();
    again.close();
    MemoryStore third = open(Durability.of(dir));
    assertThat(usedLarge(third, "channel")).isEqualTo(5_000);
    third.close();
  }

  @Test
  void aLargeLogIsWrittenOncePerFlushNotOncePerDecision() throws IOException {
    MemoryStore store = openDriven(Durability.of(dir));
    for (int i = 0; i < 40; i++) {
      admitLarge(store, "channel", 100);
      store.journal().flushNow();
    }
    store.close();
    // the log is 4 bytes an entry; written whole per decision the journal would hold n^2/2 * 4 = 32 MB;
    // written once per flush (40 here, of at most 16 KB each) it holds 40 copies, under 1 MB
    assertThat(Files.size(onlyJournal())).isLessThan(4_000L * 4_000 * 4 / 2 / 4);
  }

  @Test
  void aLargeLogSurvivesASnapshotAndTheWritesAfterIt() throws Exception {
    MemoryStore store = openDriven(Durability.of(dir));
    admitLarge(store, "channel", 2_000);
    admitLarge(store, "quiet", 1_200); // not touched after the snapshot: only the snapshot holds it
    store.requestSnapshot();
    snapshotNow(store);
    assertThat(snapshots()).hasSize(1);
    admitLarge(store, "channel", 500);
    store.close();
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("journal"))).hasSize(1);
    }
    MemoryStore again = open(Durability.of(dir));
    assertThat(again.recoveryProblems()).isEmpty();
    assertThat(usedLarge(again, "channel")).isEqualTo(2_500);
    assertThat(usedLarge(again, "quiet")).isEqualTo(1_200);
    again.close();
  }

  @Test
  void aReleaseAndADeleteOfLargeLogsSurvive() {
    MemoryStore store = open(Durability.of(dir));
    long first = clock.millis();
    admitLarge(store, "channel", 2_000);
    // a recent message (a release moves at most LargeLog.MAX_RELEASE_MOVES entries)
    PartitionRequest release = decideLarge("channel").asRelease(first + 1_990);
    assertThat(store.applyNow(release).allowed()).isTrue();
    admitLarge(store, "deleted", 1_100);
    store.delete("deleted".getBytes(StandardCharsets.UTF_8)).join();
    store.close();

    MemoryStore again = open(Durability.of(dir));
    assertThat(usedLarge(again, "channel")).isEqualTo(1_999);
    assertThat(usedLarge(again, "deleted")).isZero();
    again.close();
  }

  @Test
  void aLargeLogThatExpiredWhileStoppedIsNotLoaded() {
    MemoryStore store = open(Durability.of(dir));
    admitLarge(store, "channel", 1_100);
    store.close();
    clock.advance(Duration.ofHours(2).toMillis());
    MemoryStore again = open(Durability.of(dir));
    assertThat(usedLarge(again, "channel")).isZero();
    again.close();
  }

  @Test
  void everyWriteModeHasTheLargeLogOnDiskWhenTheFutureCompletes() throws IOException {
    MemoryStore store = open(Durability.everyWrite(dir));
    for (int i = 0; i < 1_500; i++) {
      assertThat(store.apply(decideLarge("channel")).join().allowed()).isTrue();
      clock.advance(1);
    }
    assertThat(store.delete("channel".getBytes(StandardCharsets.UTF_8)).join()).isTrue();
    for (int i = 0; i < 1_200; i++) {
      assertThat(store.apply(decideLarge("after")).join().allowed()).isTrue();
    }
    // a crash now (kill -9): copy the directory as it is on disk, without closing the store
    Path copy = Files.createTempDirectory(dir.getParent(), "crash-copy");
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(f -> !f.getFileName().toString().equals("lock")).toList()) {
        Files.copy(f, copy.resolve(f.getFileName()));
      }
    }
    MemoryStore recovered = open(Durability.everyWrite(copy));
    assertThat(recovered.recoveryProblems()).isEmpty();
    assertThat(usedLarge(recovered, "channel")).isZero();
    assertThat(usedLarge(recovered, "after")).isEqualTo(1_200);
    recovered.close();
    store.close();
  }

  @Test
  void aTruncatedLargeLogEntryIsReportedAndTheEarlierStateRecovered() throws IOException {
    MemoryStore store = open(Durability.of(dir));
    admitLarge(store, "channel", 1_500);
    store.close();
    store = open(Durability.of(dir));
    admitLarge(store, "channel", 100);
    store.close();
    Path newest;
    try (Stream<Path> files = Files.list(dir)) {
      newest = files.filter(p -> p.getFileName().toString().startsWith("journal")).sorted().reduce((a, b) -> b)
          .orElseThrow();
    }
    try (RandomAccessFile f = new RandomAccessFile(newest.toFile(), "rw")) {
      f.setLength(Files.size(newest) - 5); // cut the newest journal's only large-log entry
    }
    MemoryStore again = open(Durability.of(dir));
    assertThat(again.recoveryProblems()).singleElement().asString().contains("truncated");
    assertThat(usedLarge(again, "channel")).isEqualTo(1_500);
    again.close();
  }

  @Test
  void aFileOfAnotherVersionIsReportedAndNotRead() throws IOException {
    MemoryStore store = open(Durability.of(dir));
    store.applyNow(decide("old"));
    store.close();
    try (RandomAccessFile f = new RandomAccessFile(onlyJournal().toFile(), "rw")) {
      f.seek(5);
      f.writeByte(JournalFormat.FILE_VERSION + 1);
    }
    MemoryStore again = open(Durability.of(dir));
    assertThat(again.recoveryProblems()).singleElement().asString()
        .contains("written in file format " + (JournalFormat.FILE_VERSION + 1))
        .contains("this version reads file formats " + JournalFormat.READS_FROM_VERSION + " to "
            + JournalFormat.FILE_VERSION);
    assertThat(room(again, "old")).isEqualTo(3);
    again.close();
  }

  @Test
  void aFileOfTheFormatBeforeDeltasIsStillRead() throws IOException {
    MemoryStore store = open(Durability.of(dir));
    store.applyNow(decide("old")); // a new partition: its whole record, an entry version 2 has too
    store.close();
    try (RandomAccessFile f = new RandomAccessFile(onlyJournal().toFile(), "rw")) {
      f.seek(5);
      f.writeByte(JournalFormat.READS_FROM_VERSION);
    }
    MemoryStore again = open(Durability.of(dir));
    assertThat(again.recoveryProblems()).isEmpty();
    assertThat(room(again, "old")).isEqualTo(2);
    again.close();
  }

  @Test
  void recordsOfAnotherLayoutAreReportedAndNotRead() throws IOException {
    MemoryStore store = open(Durability.of(dir));
    store.applyNow(decide("old"));
    store.close();
    try (RandomAccessFile f = new RandomAccessFile(onlyJournal().toFile(), "rw")) {
      f.seek(8);
      f.writeInt(PartitionRecord.FORMAT - 1);
    }
    MemoryStore again = open(Durability.of(dir));
    assertThat(again.recoveryProblems()).singleElement().asString()
        .contains("holds records in layout " + (PartitionRecord.FORMAT - 1))
        .contains("this version reads layout " + PartitionRecord.FORMAT);
    assertThat(room(again, "old")).isEqualTo(3);
    again.close();
  }

  @Test
  void oneDirectoryServesOneStoreAtATime() {
    MemoryStore store = open(Durability.of(dir));
    assertThatThrownBy(() -> open(Durability.of(dir))).isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("in use");
    store.close();
    open(Durability.of(dir)).close();
  }

  private Path onlyJournal() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> journals = files.filter(p -> p.getFileName().toString().startsWith("journal")).sorted().toList();
      assertThat(journals).isNotEmpty();
      return journals.get(journals.size() - 1).equals(journals.get(0)) ? journals.get(0) : largest(journals);
    }
  }

  private static Path largest(List<Path> paths) throws IOException {
    Path best = paths.get(0);
    for (Path p : paths) {
      if (Files.size(p) > Files.size(best)) {
        best = p;
      }
    }
    return best;
  }

  private List<Path> snapshots() {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().matches("snapshot-\\d+\\.bin")).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
