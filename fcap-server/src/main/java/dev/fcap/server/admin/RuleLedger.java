package dev.fcap.server.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyException;
import dev.fcap.policy.PolicyParser;
import dev.fcap.server.audit.RuleDiff;
import dev.fcap.server.files.AtomicFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link RulesAdmin} keeps across restarts: the policies in force with their versions, and the
 * history of changes. A hand edit of the rules file leaves the file's {@code version:} behind the
 * version the server gave it; the ledger remembers the version, so a restart continues from it (a
 * version never goes back, and an {@code If-Match} of an older one stays refused), and tells a file
 * edited while the server was down from the one it last had in force.
 *
 * <p>Beside a rules file {@code rules.yaml}: {@code rules.yaml.in-force} (the policies in force, YAML,
 * replaced atomically at every change) and {@code rules.yaml.history} (one JSON line per change,
 * forced to disk; rewritten with the newest {@code keep} lines when it holds twice as many). Another
 * rules source (Redis) keeps versions itself: its ledger is {@link #inMemory()}.
 */
final class RuleLedger {
  private static final Logger LOG = LoggerFactory.getLogger(RuleLedger.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Path inForceFile;
  private final Path historyFile;
  private final int keep;
  private final Map<String, Policy> inForce = new LinkedHashMap<>();
  private final List<RuleChange> history = new ArrayList<>();
  private int historyLines;

  private RuleLedger(Path inForceFile, Path historyFile, int keep) {
    this.inForceFile = inForceFile;
    this.historyFile = historyFile;
    this.keep = keep;
  }

  /** Nothing kept across restarts. */
  static RuleLedger inMemory() {
    return new RuleLedger(null, null, 0);
  }

  /** The ledger of {@code rulesFile}, read from beside it; damaged lines are skipped with a warning. */
  static RuleLedger beside(Path rulesFile, int keep) {
    Path f = rulesFile.toAbsolutePath();
    RuleLedger l = new RuleLedger(f.resolveSibling(f.getFileName() + ".in-force"),
        f.resolveSibling(f.getFileName() + ".history"), keep);
    l.read();
    return l;
  }

  private void read() {
    try {
      if (Files.exists(inForceFile)) {
        PolicyParser.parse(Files.readString(inForceFile)).forEach(p -> inForce.put(p.tenant(), p));
      }
    } catch (IOException | PolicyException e) {
      LOG.warn("cannot read {} (versions continue from the rules file's): {}", inForceFile, e.toString());
    }
    try {
      if (Files.exists(historyFile)) {
        for (String line : Files.readAllLines(historyFile, StandardCharsets.UTF_8)) {
          historyLines++;
          try {
            history.add(change(JSON.readTree(line)));
          } catch (IOException | RuntimeException e) {
            LOG.warn("skipping a damaged line of {}: {}", historyFile, e.toString());
          }
        }
      }
    } catch (IOException e) {
      LOG.warn("cannot read {} (the rules history starts empty): {}", historyFile, e.toString());
    }
  }

  /** The policies in force when the ledger was last written, by tenant. */
  Map<String, Policy> inForce() {
    return Map.copyOf(inForce);
  }

  /** The changes kept, oldest first. */
  List<RuleChange> history() {
    return List.copyOf(history);
  }

  /** Keeps {@code policies} as the ones in force. */
  void inForce(Iterable<Policy> policies) throws IOException {
    inForce.clear();
    policies.forEach(p -> inForce.put(p.tenant(), p));
    if (inForceFile != null) {
      AtomicFile.write(inForceFile, PolicyParser.toYaml(List.copyOf(inForce.values())));
    }
  }

  /** Appends a change, forced to disk. */
  void append(RuleChange c) throws IOException {
    history.add(c);
    while (history.size() > Math.max(keep, 1)) {
      history.remove(0);
    }
    if (historyFile == null) {
      return;
    }
    if (historyLines >= 2 * Math.max(keep, 1)) {
      StringBuilder all = new StringBuilder();
      for (RuleChange h : history) {
        all.append(JSON.writeValueAsString(tree(h))).append('\n');
      }
      AtomicFile.write(historyFile, all.toString());
      historyLines = history.size();
      return;
    }
    byte[] line = (JSON.writeValueAsString(tree(c)) + "\n").getBytes(StandardCharsets.UTF_8);
    try (FileChannel ch = FileChannel.open(historyFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND)) {
      ByteBuffer buf = ByteBuffer.wrap(line);
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
    }
    historyLines++;
  }

  private static ObjectNode tree(RuleChange c) {
    ObjectNode n = JSON.createObjectNode();
    n.put("tenant", c.tenant()).put("version", c.version()).put("time", c.time()).put("who", c.who())
        .put("action", c.action());
    if (c.ruleId() != null) {
      n.put("rule", c.ruleId());
    }
    var changes = n.putArray("changes");
    for (RuleDiff d : c.changes()) {
      ObjectNode o = changes.addObject().put("rule", d.rule());
      o.set("before", d.before());
      o.set("after", d.after());
    }
    return n;
  }

  private static RuleChange change(JsonNode n) {
    List<RuleDiff> changes = new ArrayList<>();
    for (JsonNode d : n.path("changes")) {
      changes.add(new RuleDiff(d.get("rule").asText(), nullable(d.get("before")), nullable(d.get("after"))));
    }
    return new RuleChange(n.get("tenant").asText(), n.get("version").asLong(), n.get("time").asLong(),
        n.get("who").asText(), n.get("action").asText(), n.hasNonNull("rule") ? n.get("rule").asText() : null,
        changes);
  }

  private static JsonNode nullable(JsonNode n) {
    return n == null || n.isNull() ? null : n;
  }
}
