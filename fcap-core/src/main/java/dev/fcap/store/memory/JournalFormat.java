package dev.fcap.store.memory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * The bytes of the store's state files: the header and the versions it names, the entry framing
 * and its checksums, and the names of journal and snapshot files. Stateless.
 *
 * <p>A file opens with a 16-byte header: {@code FCAP}, the kind ({@code J} journal, {@code S}
 * snapshot), {@link #FILE_VERSION}, two unused bytes, the record layout ({@link PartitionRecord#FORMAT})
 * as an i32, the generation as an i32. Then entries: {@code length:i32 crc32c:i32 payload}, the
 * payload's first byte its type. A file of another version is reported and not read: a format
 * changes only with its version number. Version 3 adds {@link #DELTA} entries to version 2's; a
 * version 2 file (none) is read as it was.
 */
final class JournalFormat {
  /** Version of the file framing (header and entries); the record layout has its own. */
  static final int FILE_VERSION = 3;
  /** The earlier framing this version still reads: the same entries, without {@link #DELTA}. */
  static final int READS_FROM_VERSION = 2;
  static final int HEADER = 16;
  static final byte JOURNAL = 'J';
  static final byte SNAPSHOT = 'S';
  static final byte PUT = 1;
  static final byte REMOVE = 2;
  /** The end of a snapshot: the number of entries before it, as an i64. */
  static final byte END = 3;
  /** A large sliding log: partition, counter, expiresAt, the log in {@code LargeLog.encode()} form (empty: gone). */
  static final byte LARGE = 4;
  /** A decision's step, replayed on the partition's record before it ({@link JournalDelta}). */
  static final byte DELTA = 5;
  private static final byte[] MAGIC = {'F', 'C', 'A', 'P'};
  private static final Pattern FILE = Pattern.compile("(journal|snapshot)-(\\d{10})\\.(log|bin)");

  private JournalFormat() {}

  static byte[] header(byte kind, long gen) {
    byte[] h = new byte[HEADER];
    System.arraycopy(MAGIC, 0, h, 0, 4);
    h[4] = kind;
    h[5] = FILE_VERSION;
    putInt(h, 8, PartitionRecord.FORMAT);
    putInt(h, 12, (int) gen);
    return h;
  }

  /** Why a file with header {@code h} cannot be read as a file of {@code kind}; null if it can. */
  static String checkHeader(byte[] h, byte kind) {
    if (!Arrays.equals(h, 0, 4, MAGIC, 0, 4) || h[4] != kind) {
      return "not a fcap " + (kind == SNAPSHOT ? "snapshot" : "journal") + " (bad magic)";
    }
    if (h[5] < READS_FROM_VERSION || h[5] > FILE_VERSION) {
      return "written in file format " + h[5] + ", this version reads file formats " + READS_FROM_VERSION + " to "
          + FILE_VERSION;
    }
    int layout = getInt(h, 8);
    if (layout != PartitionRecord.FORMAT) {
      return "holds records in layout " + layout + ", this version reads layout " + PartitionRecord.FORMAT;
    }
    return null;
  }

  /** Fills in the checksum of the entry at {@code at}. */
  static void seal(byte[] d, int at) {
    CRC32C crc = new CRC32C();
    crc.update(d, at + 8, getInt(d, at));
    putInt(d, at + 4, (int) crc.getValue());
  }

  static long countEntries(byte[] d, int from, int to) {
    long n = 0;
    for (int at = from; at < to; at += 8 + getInt(d, at)) {
      n++;
    }
    return n;
  }

  // ---------------------------------------------------------------------------------------------
  // Files

  /** Creates a file of {@code kind} with its header, forced; one that cannot be completed is removed. */
  static FileChannel create(Path path, byte kind, long gen) throws IOException {
    FileChannel c = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    try {
      writeFully(c, ByteBuffer.wrap(header(kind, gen)));
      c.force(true);
      return c;
    } catch (IOException e) {
      c.close();
      Files.deleteIfExists(path); // else the next try of this generation would find it there
      throw e;
    }
  }

  /** The journals and snapshots in {@code dir}, by name (so by kind, then generation). */
  static TreeMap<String, Path> files(Path dir) throws IOException {
    TreeMap<String, Path> out = new TreeMap<>();
    try (var stream = Files.newDirectoryStream(dir)) {
      for (Path p : stream) {
        if (FILE.matcher(p.getFileName().toString()).matches()) {
          out.put(p.getFileName().toString(), p);
        }
      }
    }
    return out;
  }

  static boolean isSnapshot(Path p) {
    return p.getFileName().toString().startsWith("snapshot");
  }

  static long generationOf(Path p) {
    Matcher m = FILE.matcher(p.getFileName().toString());
    if (!m.matches()) {
      throw new IllegalArgumentException(p.toString());
    }
    return Long.parseLong(m.group(2));
  }

  static Path journalPath(Path dir, long gen) {
    return dir.resolve(String.format("journal-%010d.log", gen));
  }

  static Path snapshotPath(Path dir, long gen) {
    return dir.resolve(String.format("snapshot-%010d.bin", gen));
  }

  static void syncDirectory(Path dir) {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // some file systems cannot force a directory; the files themselves are forced
    }
  }

  static void writeFully(FileChannel c, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      c.write(b);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Big-endian integers

  static void putInt(byte[] d, int at, int v) {
    d[at] = (byte) (v >>> 24);
    d[at + 1] = (byte) (v >>> 16);
    d[at + 2] = (byte) (v >>> 8);
    d[at + 3] = (byte) v;
  }

  static void putLong(byte[] d, int at, long v) {
    putInt(d, at, (int) (v >>> 32));
    putInt(d, at + 4, (int) v);
  }

  static int getInt(byte[] d, int at) {
    return (d[at] & 0xff) << 24 | (d[at + 1] & 0xff) << 16 | (d[at + 2] & 0xff) << 8 | (d[at + 3] & 0xff);
  }

  static long getLong(byte[] d, int at) {
    return (long) getInt(d, at) << 32 | (getInt(d, at + 4) & 0xFFFF_FFFFL);
  }
}
