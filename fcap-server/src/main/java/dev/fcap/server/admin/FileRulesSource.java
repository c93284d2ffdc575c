package dev.fcap.server.admin;

import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyException;
import dev.fcap.policy.PolicyParser;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Policies in a YAML rules file.
 *
 * <p>{@link #save} writes a temporary file in the same directory, forces it to disk and renames it
 * over the rules file ({@code ATOMIC_MOVE}): a crash leaves the old file or the new one, never half
 * of one, and a reader never sees a partial file. {@link #watch} watches the directory; a change
 * whose text differs from what this instance last wrote or read is a hand edit, parsed and handed
 * on (an invalid edit is logged with its errors and ignored, so a typo cannot take the rules away).
 */
public final class FileRulesSource implements RulesSource {
  private static final Logger LOG = LoggerFactory.getLogger(FileRulesSource.class);
  private final Path file;
  private volatile String lastText;
  private final AtomicLong reloadFailures = new AtomicLong();
  private WatchService watcher;
  private Thread watchThread;

  /**
   * @param seed copied to {@code file} when it does not exist: a path, or {@code builtin} for the seed
   *     policy in the jar
   */
  public FileRulesSource(Path file, String seed) throws IOException {
    this.file = file.toAbsolutePath();
    if (!Files.exists(this.file)) {
      seed(seed);
    }
  }

  private void seed(String seed) throws IOException {
    if (this.file.getParent() != null) {
      Files.createDirectories(this.file.getParent());
    }
    byte[] text;
    if (seed.equals("builtin")) {
      try (InputStream in = FileRulesSource.class.getResourceAsStream("/fcap/seed/rules.yaml")) {
        if (in == null) {
          throw new IOException("the built-in seed policy is missing from the jar");
        }
        text = in.readAllBytes();
      }
    } else {
      text = Files.readAllBytes(Path.of(seed));
    }
    writeAtomically(new String(text, StandardCharsets.UTF_8));
    LOG.info("created {} from the seed policy ({})", file, seed);
  }

  @Override
  public String describe() {
    return "file " + file;
  }

  public Path file() {
    return file;
  }

  @Override
  public synchronized List<Policy> load() throws IOException {
    String text = Files.readString(file);
    List<Policy> policies = PolicyParser.parse(text);
    lastText = text;
    return policies;
  }

  @Override
  public synchronized void save(List<Policy> policies) throws IOException {
    writeAtomically(PolicyParser.toYaml(policies));
  }

  private void writeAtomically(String text) throws IOException {
    Path tmp = Files.createTempFile(file.getParent(), "." + file.getFileName(), ".tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer buf = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
      lastText = text;
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  @Override
  public synchronized void watch(Consumer<List<Policy>> onChange) {
    try {
      watcher = file.getFileSystem().newWatchService();
      file.getParent().register(watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY);
    } catch (IOException e) {
      LOG.warn("cannot watch {} for hand edits: {}", file, e.toString());
      return;
    }
    watchThread = new Thread(() -> watchLoop(onChange), "fcap-rules-watch");
    watchThread.setDaemon(true);
    watchThread.start();
  }

  private void watchLoop(Consumer<List<Policy>> onChange) {
    try {
      while (true) {
        WatchKey key = watcher.take();
        boolean ours = false;
        for (WatchEvent<?> e : key.pollEvents()) {
          ours |= file.getFileName().equals(e.context());
        }
        key.reset();
        if (ours) {
          // editors write in several steps; let them finish
          TimeUnit.MILLISECONDS.sleep(50);
          reloadIfChanged(onChange);
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      // closing
    }
  }

  /** Reads the file and hands on its policies if the text changed; visible for tests. */
  void reloadIfChanged(Consumer<List<Policy>> onChange) {
    List<Policy> policies;
    synchronized (this) {
      String text;
      try {
        text = Files.readString(file);
      } catch (IOException e) {
        LOG.warn("cannot read {} after a change: {}", file, e.toString());
        reloadFailures.incrementAndGet();
        return;
      }
      if (text.equals(lastText)) {
        return;
      }
      lastText = text;
      try {
        policies = PolicyParser.parse(text);
      } catch (PolicyException e) {
        LOG.error("hand edit of {} refused, the rules in force stay: {}", file, e.getMessage());
        reloadFailures.incrementAndGet();
        return;
      }
    }
    LOG.info("{} changed on disk; reloading", file);
    onChange.accept(policies);
  }

  @Override
  public long reloadFailures() {
    return reloadFailures.get();
  }

  @Override
  public synchronized void close() {
    if (watcher != null) {
      try {
        watcher.close();
      } catch (IOException e) {
        LOG.debug("closing the watcher: {}", e.toString());
      }
    }
  }
}
