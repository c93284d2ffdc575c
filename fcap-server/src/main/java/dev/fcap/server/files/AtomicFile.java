package dev.fcap.server.files;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Replaces a file whole or not at all: written beside it, forced to disk, then renamed over it, so a
 * crash or a reader never meets half a rules file or half a ledger.
 */
public final class AtomicFile {
  private AtomicFile() {}

  public static void write(Path file, String text) throws IOException {
    write(file, out -> out.write(text.getBytes(StandardCharsets.UTF_8)));
  }

  /** What {@code content} writes, streamed: a large file is never held whole in memory. */
  public static void write(Path file, Content content) throws IOException {
    Path tmp = Files.createTempFile(file.getParent(), "." + file.getFileName(), ".tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      OutputStream out = new BufferedOutputStream(Channels.newOutputStream(ch), 64 * 1024);
      content.writeTo(out);
      out.flush();
      ch.force(true);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /** Writes a file's content (and leaves {@code out} open). */
  @FunctionalInterface
  public interface Content {
    void writeTo(OutputStream out) throws IOException;
  }
}
