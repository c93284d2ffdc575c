package dev.fcap.server.admin;

import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyError;
import dev.fcap.policy.PolicyException;
import dev.fcap.policy.PolicyParser;
import dev.fcap.server.files.AtomicFile;
import dev.fcap.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
 * of one, and a reader never sees a partial file.
 *
 * <p><b>Hand edits.</b> {@link #watch} watches the directory. An editor (or {@code cat >}) may write
 * the file in several steps, and a half-written file can parse (2 of 4 rules is valid YAML), so a
 * change is applied only once the text has stayed the same for the settle time ({@code rules.settle},
 * timed on the injected {@link Clock}) and parses whole. An invalid edit is refused: the rules in force
 * stay, the refusal is kept ({@link #rejectedEdit()}: shown in {@code GET /v1/rules} and counted in
 * {@code /metrics}) until the file is valid again.
 *
 * <p><b>Last good version.</b> Every version in force is also written beside the file
 * ({@code rules.yaml.last-good}). A start with an invalid file starts on that version, with a loud
 * warning and the refusal shown as above, instead of failing: an invalid hand edit never keeps the
 * server down. Without a last good version an invalid file still fails the start. A file that is
 * not UTF-8 text is invalid like one that does not parse; a file that is gone is put back from its
 * last good version at start (a deleted file must not bring back the seed policy over the rules in
 * force), and while serving its deletion is a refused edit like any other.
 *
 * <p>Tested by {@code FileRulesSourceTest} (the settle logic on a manual clock) and
 * {@code RulesAdminIT} (real edits, restarts).
 */
public final class FileRulesSource implements RulesSource {
  private static final Logger LOG = LoggerFactory.getLogger(FileRulesSource.class);
  /** Used when no settle time is given: long enough for an editor's several writes, short for an operator. */
  public static final Duration DEFAULT_SETTLE = Duration.ofMillis(500);
  private final Path file;
  private final Path lastGood;
  private final Clock clock;
  private final long settleMs;
  private volatile String lastText;
  /** A changed text seen by the watcher, and since when it has stayed the same; null when none. */
  private Pending pending;
  private volatile RejectedEdit rejected;
  private final AtomicLong reloadFailures = new AtomicLong();
  private WatchService watcher;
  private Thread watchThread;

  private record Pending(String text, long since) {}

  /**
   * What {@link #readText} gives for a file that is gone, or not UTF-8: texts no YAML file can be
   * (YAML has no NUL), so they settle and are refused like any other edit.
   */
  private static final String MISSING = "\0missing";
  private static final String NOT_UTF8 = "\0not UTF-8";

  /**
   * @param seed copied to {@code file} when it does not exist: a path, or {@code builtin} for the seed
   *     policy in the jar
   */
  public FileRulesSource(Path file, String seed) throws IOException {
    this(file, seed, Clock.system(), DEFAULT_SETTLE);
  }

  /**
   * @param clock times the settle period
   * @param settle how long a hand edit must stay unchanged before it is applied
   */
  public FileRulesSource(Path file, String seed, Clock clock, Duration settle) throws IOException {
    this.file = file.toAbsolutePath();
    this.lastGood = this.file.resolveSibling(this.file.getFileName() + ".last-good");
    this.clock = clock;
    this.settleMs = settle.toMillis();
    if (!Files.exists(this.file)) {
      if (Files.exists(lastGood)) {
        writeAtomically(Files.readString(lastGood));
        LOG.warn("{} was missing; put back from its last good version {}", this.file, lastGood);
      } else {
        seed(seed);
      }
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
    String text;
    try {
      text = readText(file);
    } catch (IOException e) {
      throw new IOException("cannot read the rules file " + file + ": " + e, e);
    }
    List<Policy> policies;
    try {
      policies = parse(text);
    } catch (PolicyException e) {
      if (!Files.exists(lastGood)) {
        throw e;
      }
      List<Policy> good = PolicyParser.parse(Files.readString(lastGood));
      refused(text, e);
      LOG.error("""

          ************************************************************************
          {} is INVALID; starting on its last good version {} instead.
          The file stays as it is; fix it and it is applied. Errors:
            {}
          ************************************************************************""", file, lastGood,
          e.getMessage());
      return good;
    }
    lastText = text;
    rejected = null;
    keepLastGood(text);
    return policies;
  }

  /** The file's text; {@link #MISSING} or {@link #NOT_UTF8} where it has none to parse. */
  private static String readText(Path file) throws IOException {
    try {
      return Files.readString(file);
    } catch (java.nio.file.NoSuchFileException e) {
      return MISSING;
    } catch (java.nio.charset.CharacterCodingException e) {
      return NOT_UTF8;
    }
  }

  private static List<Policy> parse(String text) {
    if (text.equals(MISSING) || text.equals(NOT_UTF8)) {
      throw new PolicyException(List.of(new PolicyError(null, null, null, text.equals(MISSING)
          ? "the rules file does not exist (deleted?); the rules in force stay until it is back"
          : "the rules file is not UTF-8 text")));
    }
    return PolicyParser.parse(text);
  }

  @Override
  public Optional<RejectedEdit> rejectedEdit() {
    return Optional.ofNullable(rejected);
  }

  private void refused(String text, PolicyException e) {
    lastText = text;
    rejected = new RejectedEdit(clock.millis(), e.errors());
    reloadFailures.incrementAndGet();
  }

  private void keepLastGood(String text) throws IOException {
    AtomicFile.write(lastGood, text);
  }

  @Override
  public synchronized void save(List<Policy> policies) throws IOException {
    String text = PolicyParser.toYaml(policies);
    writeAtomically(text);
    rejected = null;
    pending = null;
    keepLastGood(text);
  }

  private void writeAtomically(String text) throws IOException {
    AtomicFile.write(file, text);
    lastText = text;
  }

  @Override
  public synchronized void watch(Consumer<List<Policy>> onChange) {
    try {
      watcher = file.getFileSystem().newWatchService();
      file.getParent().register(watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
          StandardWatchEventKinds.ENTRY_DELETE);
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
      long wait = -1;
      while (true) {
        WatchKey key = wait < 0 ? watcher.take() : watcher.poll(wait, TimeUnit.MILLISECONDS);
        boolean ours = key == null; // a timeout: the settle time of a pending edit may be over
        if (key != null) {
          for (WatchEvent<?> e : key.pollEvents()) {
            ours |= file.getFileName().equals(e.context()) || e.kind() == StandardWatchEventKinds.OVERFLOW;
          }
          key.reset();
        }
        if (ours || wait >= 0) {
          wait = check(onChange);
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      // closing
    }
  }

  /**
   * One look at the file: a text unlike the one in force starts (or restarts) the settle period; a
   * text unchanged for the whole period is parsed, then applied or refused. Returns how long to wait
   * before looking again (-1: until the next change). Visible for tests, which call it on a manual clock.
   */
  long check(Consumer<List<Policy>> onChange) {
    List<Policy> policies;
    synchronized (this) {
      String text;
      try {
        text = readText(file); // a deletion or a file that is not text settles and is refused as an edit
      } catch (IOException e) {
        // e.g. between an editor's delete and create: look again after the settle time
        LOG.warn("cannot read {} after a change: {}", file, e.toString());
        reloadFailures.incrementAndGet();
        pending = null;
        return settleMs;
      }
      long now = clock.millis();
      if (text.equals(lastText)) {
        pending = null;
        return -1;
      }
      if (pending == null || !pending.text().equals(text)) {
        pending = new Pending(text, now);
        return Math.max(1, settleMs);
      }
      long quiet = now - pending.since();
      if (quiet < settleMs) {
        return settleMs - quiet;
      }
      pending = null;
      try {
        policies = parse(text);
      } catch (PolicyException e) {
        refused(text, e);
        LOG.error("hand edit of {} refused, the rules in force stay (see GET /v1/rules): {}", file, e.getMessage());
        return -1;
      }
      lastText = text;
      rejected = null;
      try {
        keepLastGood(text);
      } catch (IOException e) {
        LOG.warn("cannot keep the last good version in {}: {}", lastGood, e.toString());
      }
    }
    LOG.info("{} changed on disk; reloading", file);
    onChange.accept(policies);
    return -1;
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
