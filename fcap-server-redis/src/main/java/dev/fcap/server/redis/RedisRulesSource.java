package dev.fcap.server.redis;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyException;
import dev.fcap.policy.PolicyParser;
import dev.fcap.server.admin.RulesConflictException;
import dev.fcap.server.admin.RulesSource;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policies in Redis, shared by every node.
 *
 * <p><b>Design.</b> The document is ONE Redis string, {@code {NAME}}, holding exactly the YAML the
 * file source writes ({@link PolicyParser#toYaml}, every tenant with its version). Beside it, in the
 * same hash slot: {@code {NAME}:revision} (a counter raised by every save) and {@code {NAME}:history}
 * (the newest {@code rules.history} saves, each with revision, Redis time, the saving node and the
 * whole document, so any earlier state can be restored).
 *
 * <p><b>Compare-and-set.</b> This instance remembers the SHA-1 of the document its node's policies
 * come from ({@code base}). {@link #save} runs {@code rules-save.lua}, which writes only if the stored
 * document still has that digest; otherwise nothing is written and {@link RulesConflictException}
 * says so. So two nodes that both edit from the same version cannot both succeed: the second learns
 * of the first's change and must reapply its own on top. Because the digest is of the text itself,
 * a hand edit ({@code SET}) is a change like any other.
 *
 * <p><b>Notification.</b> A poller asks Redis for the document's digest every {@link #POLL} (one small
 * script call; Redis hashes the text) and, when it differs from {@code base}, reads the document and
 * hands it on: every node picks up a change within a second, including after a Redis restart or
 * failover, when a pub/sub message could have been lost. {@code base} moves to the new digest only
 * after the policies were handed on, so an edit made on this node in between is refused rather than
 * applied over policies the node has not seen yet.
 */
public final class RedisRulesSource implements RulesSource {
  static final Duration POLL = Duration.ofMillis(250);
  private static final Logger LOG = LoggerFactory.getLogger(RedisRulesSource.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  private final RedisEndpoint endpoint;
  private final RedisEndpoint.Link link;
  private final String docKey;
  private final String revisionKey;
  private final String historyKey;
  private final String seed;
  private final int historySize;
  private final String node;
  private final String readScript = script("rules-read.lua");
  private final String saveScript = script("rules-save.lua");
  private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "fcap-rules-redis-poll");
    t.setDaemon(true);
    return t;
  });
  /** SHA-1 of the document this node's policies come from ('' before the first load). */
  private String base = "";
  /** The last valid document this node handed on or saved: written back if Redis lost the key. */
  private String lastDoc;
  private volatile boolean failing;
  private volatile Consumer<List<Policy>> listener;
  private final AtomicLong reloadFailures = new AtomicLong();

  /**
   * @param name the key name without braces (the keys are {@code {name}}, {@code {name}:revision},
   *     {@code {name}:history})
   * @param seed written to Redis if the document does not exist: a YAML file path, or {@code builtin}
   */
  RedisRulesSource(RedisEndpoint endpoint, RedisEndpoint.Link link, String name, String seed, int historySize) {
    if (name.isEmpty() || name.contains("{") || name.contains("}")) {
      throw new IllegalArgumentException("rules.source: key must be a non-empty name without braces, got '" + name
          + "'");
    }
    this.endpoint = endpoint;
    this.link = link;
    this.docKey = "{" + name + "}";
    this.revisionKey = docKey + ":revision";
    this.historyKey = docKey + ":history";
    this.seed = seed;
    this.historySize = historySize;
    this.node = nodeName();
  }

  @Override
  public String describe() {
    return "redis " + endpoint.redacted() + " key " + docKey;
  }

  /** The key holding the YAML document. */
  public String key() {
    return docKey;
  }

  @Override
  public synchronized List<Policy> load() throws IOException {
    Read r = read(true);
    if (r.sha().isEmpty()) {
      seedIfAbsent();
      r = read(true);
    }
    List<Policy> policies = PolicyParser.parse(r.doc());
    base = r.sha();
    lastDoc = r.doc();
    return policies;
  }

  private void seedIfAbsent() throws IOException {
    List<Policy> seeded = PolicyParser.parse(seedText()).stream()
        .map(p -> p.withVersion(Math.max(1, p.version()))).toList();
    if (write("", PolicyParser.toYaml(seeded), "seed") != null) {
      LOG.info("rules: {} did not exist; wrote the seed policy ({})", docKey, seed);
    }
  }

  private String seedText() throws IOException {
    if (!seed.equals("builtin")) {
      return Files.readString(Path.of(seed));
    }
    try (InputStream in = RedisRulesSource.class.getResourceAsStream("/fcap/seed/rules.yaml")) {
      if (in == null) {
        throw new IOException("the built-in seed policy is missing from the jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /**
   * Writes the policies if the document is still the one this node's policies come from.
   *
   * @throws RulesConflictException if another node (or a hand edit) changed the document first
   */
  @Override
  public synchronized void save(List<Policy> policies) throws IOException {
    String doc = PolicyParser.toYaml(policies);
    String sha = write(base, doc, "save");
    if (sha == null) {
      poller.execute(this::pollQuietly);
      throw new RulesConflictException("the rules in Redis (" + docKey + ") were changed by another node since this "
          + "node read them; the change was not applied. Read the rules again and reapply it");
    }
    base = sha;
    lastDoc = doc;
  }

  /** Runs the compare-and-set; the new digest, or null if the stored document is not {@code expected}. */
  private String write(String expected, String doc, String action) throws IOException {
    ObjectNode entry = JSON.createObjectNode().put("node", node).put("action", action).put("yaml", doc);
    String fields = JSON.writeValueAsString(entry);
    fields = fields.substring(1, fields.length() - 1);
    List<Object> reply;
    try {
      reply = link.sync().eval(saveScript, ScriptOutputType.MULTI, new String[] {docKey, revisionKey, historyKey},
          expected, doc, fields, Integer.toString(historySize));
    } catch (RedisException e) {
      throw new IOException("cannot write the rules to " + describe() + ": " + e.getMessage(), e);
    }
    return ((Long) reply.get(0)) == 1 ? (String) reply.get(1) : null;
  }

  private Read read(boolean full) throws IOException {
    try {
      List<Object> reply = link.sync().eval(readScript, ScriptOutputType.MULTI, new String[] {docKey},
          full ? "full" : "digest");
      return new Read((String) reply.get(0), (String) reply.get(1));
    } catch (RedisException e) {
      throw new IOException("cannot read the rules from " + describe() + ": " + e.getMessage(), e);
    }
  }

  private record Read(String sha, String doc) {}

  /** The newest saves, newest first, each a JSON object (revision, time, node, action, yaml). */
  public List<String> history(int max) {
    return link.sync().lrange(historyKey, 0, max - 1L);
  }

  @Override
  public long reloadFailures() {
    return reloadFailures.get();
  }

  @Override
  public void watch(Consumer<List<Policy>> onChange) {
    long every = POLL.toMillis();
    poller.scheduleWithFixedDelay(() -> pollOnce(onChange), every, every, TimeUnit.MILLISECONDS);
  }

  private void pollQuietly() {
    // a conflict: look at once rather than at the next tick, so the node catches up quickly
    Consumer<List<Policy>> l = listener;
    if (l != null) {
      pollOnce(l);
    }
  }

  /** One poll: hands the policies on if the document changed. Never throws (it runs on a schedule). */
  private void pollOnce(Consumer<List<Policy>> onChange) {
    listener = onChange;
    String seen;
    Read r;
    synchronized (this) {
      try {
        if (read(false).sha().equals(base)) {
          recovered();
          return;
        }
        r = read(true);
      } catch (IOException e) {
        if (!failing) {
          failing = true;
          LOG.warn("rules: cannot poll {} for changes (the rules in force stay): {}", docKey, e.getMessage());
        }
        return;
      }
      recovered();
      seen = base;
      if (r.sha().isEmpty()) {
        restore();
        return;
      }
      if (r.sha().equals(base)) {
        return;
      }
    }
    List<Policy> policies;
    try {
      policies = PolicyParser.parse(r.doc());
    } catch (PolicyException e) {
      LOG.error("rules: {} holds an invalid policy, the rules in force stay: {}", docKey, e.getMessage());
      reloadFailures.incrementAndGet();
      advance(seen, r.sha(), null);
      return;
    } catch (RuntimeException e) {
      LOG.error("rules: {} is not a rules document, the rules in force stay: {}", docKey, e.toString());
      reloadFailures.incrementAndGet();
      advance(seen, r.sha(), null);
      return;
    }
    LOG.info("rules: {} changed in Redis; reloading", docKey);
    try {
      onChange.accept(policies);
    } catch (RuntimeException e) {
      LOG.error("rules: applying the change from {} failed: {}", docKey, e.toString());
      reloadFailures.incrementAndGet();
      return;
    }
    advance(seen, r.sha(), r.doc());
  }

  /**
   * Moves {@code base} to what was handed on (or refused as invalid: an API edit may then replace it),
   * unless a save of this node moved it meanwhile.
   */
  private synchronized void advance(String from, String to, String validDoc) {
    if (base.equals(from)) {
      base = to;
      if (validDoc != null) {
        lastDoc = validDoc;
      }
    }
  }

  /**
   * The key is gone (a Redis without persistence restarted, a flush): writes back the rules this node
   * decides with. Only if the key is still absent, so of several nodes one restores and the others
   * then see its document.
   */
  private void restore() {
    if (lastDoc == null) {
      return;
    }
    try {
      String sha = write("", lastDoc, "restore");
      if (sha != null) {
        base = sha;
        LOG.warn("rules: {} was missing in Redis (data lost?); wrote back the rules in force", docKey);
      }
    } catch (IOException e) {
      LOG.debug("rules: cannot restore {}: {}", docKey, e.getMessage());
    }
  }

  private void recovered() {
    if (failing) {
      failing = false;
      LOG.info("rules: {} answers again", docKey);
    }
  }

  @Override
  public void close() {
    poller.shutdownNow();
    try {
      poller.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    link.close();
  }

  private static String nodeName() {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "unknown-host";
    }
    return host + ":" + ProcessHandle.current().pid() + ":" + INSTANCES.incrementAndGet();
  }

  static String script(String name) {
    try (InputStream in = RedisRulesSource.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + name, e);
    }
  }
}
