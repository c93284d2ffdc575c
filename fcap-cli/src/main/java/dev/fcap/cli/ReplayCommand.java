package dev.fcap.cli;

import dev.fcap.engine.Engine;
import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyException;
import dev.fcap.policy.PolicyParser;
import dev.fcap.server.Backends;
import dev.fcap.server.ConfigLoader;
import dev.fcap.server.ServerConfig;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.time.Clock;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fcap replay}: runs a send log through the exact engine, each row at its own timestamp, to
 * see what the rules would have blocked, and to choose thresholds from history.
 */
@Command(
    name = "replay",
    header = "Replay a send log against a rules file and report what each rule blocked.",
    description = {
      "Replay a send log (CSV with a header) against a rules file, each row at its own timestamp, "
          + "and report per rule what it blocked (shadow rules: what they would have blocked).",
      "Columns: timestamp (epoch ms or ISO-8601), recipient; optional " + SendLog.OPTIONAL_COLUMNS + ", attr:NAME."
    },
    mixinStandardHelpOptions = true)
final class ReplayCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--rules", required = true, paramLabel = "FILE", description = "rules file (YAML), e.g. examples/rules.yaml")
  Path rules;

  @Option(names = "--log", required = true, paramLabel = "FILE", description = "send log, CSV with a header; - for stdin")
  String log;

  @Option(names = "--decisions", paramLabel = "FILE",
      description = "write one line per row, in order: 'true,' or 'false,rule-a;rule-b'")
  Path decisions;

  @Option(names = "--json", description = "print the summary as JSON")
  boolean json;

  @Option(names = "--store", paramLabel = "URI", defaultValue = "memory",
      description = "where counters live during the replay: memory (default), or a Redis URI "
          + "(redis://, rediss://, redis-sentinel://, redis-cluster://h:p,h:p); rows' timestamps are the clock "
          + "either way, and Redis keys get a prefix of their own so live counters are never touched")
  String storeUri;

  @Option(names = "--progress-every", paramLabel = "ROWS", defaultValue = "1000000",
      description = "report progress on stderr every ROWS rows (0: never); default ${DEFAULT-VALUE}")
  long progressEvery;

  @Override
  public Integer call() throws IOException {
    PrintWriter err = spec.commandLine().getErr();
    List<Policy> policies;
    try {
      policies = PolicyParser.parseFile(rules);
    } catch (NoSuchFileException e) {
      return fail("rules file not found: " + rules);
    } catch (java.nio.charset.CharacterCodingException e) {
      return fail("cannot read the rules file " + rules + ": it is not UTF-8 text; give the rules YAML");
    } catch (IOException e) {
      return fail("cannot read the rules file " + rules + ": " + CliOutput.reason(e));
    } catch (PolicyException e) {
      return fail("invalid rules in " + rules + ": " + e.getMessage());
    }
    ReplayClock clock = new ReplayClock();
    Store store;
    try {
      store = openStore(clock);
    } catch (IllegalArgumentException | StoreException | ConfigLoader.ConfigException e) {
      return fail("cannot use --store " + dev.fcap.uri.Redaction.uri(storeUri) + ": "
          + dev.fcap.uri.Redaction.scrub(e.getMessage(), storeUri));
    }
    try (Engine engine = Engine.builder(store).clock(clock).callerTime(true).releaseHorizon(java.time.Duration.ZERO)
        .policies(policies).build()) {
      ReplaySummary summary = new ReplaySummary(policies);
      long started = System.nanoTime();
      replay(engine, store, policies, clock, summary, started, err);
      double seconds = (System.nanoTime() - started) / 1e9;
      PrintWriter out = spec.commandLine().getOut();
      if (json) {
        summary.printJson(out, seconds);
      } else {
        summary.printText(out, seconds);
      }
      CliOutput.check(out, "the output");
      return 0;
    } catch (SendLog.BadRowException e) {
      return fail(log + ", " + e.getMessage() + "; stopped, nothing after it was replayed");
    } catch (NoSuchFileException e) {
      return fail("log file not found: " + log);
    } catch (IOException e) {
      return fail("cannot read the log file " + log + ": " + CliOutput.reason(e));
    } catch (CompletionException e) {
      if (e.getCause() instanceof StoreException se) {
        err.println("fcap replay: store failed: " + se.getMessage());
        return 3;
      }
      throw e;
    }
  }

  /** Decides every row in order, at its own timestamp; writes the decisions file as it goes. */
  private void replay(Engine engine, Store store, List<Policy> policies, ReplayClock clock, ReplaySummary summary,
      long started,
      PrintWriter err) throws IOException {
    try (SendLog reader = new SendLog(open(log));
        RowPipeline pipeline = new RowPipeline(reader);
        BatchDecider decider = new BatchDecider(engine, policies, storeUri.contains("://"));
        DecisionsFile decisionOut = decisions == null ? null : new DecisionsFile(decisions, policies)) {
      PendingOutput output = new PendingOutput(summary, decisionOut, started, err);
      for (SendLog.Row[] rows = pipeline.nextBatch(); rows != null; rows = pipeline.nextBatch()) {
        clock.time = rows[rows.length - 1].time();
        // the previous batch's output is written while this one is decided (BatchDecider)
        BatchVerdicts decided = decider.decide(rows, output::write);
        store.advanceCallerTimeFloor(decider.progress());
        output.next(rows, decided);
      }
      output.write();
    }
  }

  /** The summary, the decisions file and the progress lines, one batch behind the deciding. */
  private final class PendingOutput {
    private final ReplaySummary summary;
    private final DecisionsFile decisionOut;
    private final long started;
    private final PrintWriter err;
    private long nextProgress = progressEvery;
    private SendLog.Row[] rows;
    private BatchVerdicts decided;

    PendingOutput(ReplaySummary summary, DecisionsFile decisionOut, long started, PrintWriter err) {
      this.summary = summary;
      this.decisionOut = decisionOut;
      this.started = started;
      this.err = err;
    }

    /** The batch the next {@link #write} writes. */
    void next(SendLog.Row[] rows, BatchVerdicts decided) {
      this.rows = rows;
      this.decided = decided;
    }

    /** Writes the pending batch, if any. */
    void write() throws IOException {
      if (rows == null) {
        return;
      }
      for (int i = 0; i < rows.length; i++) {
        String tenant = rows[i].message().tenant();
        summary.add(tenant, decided, i);
        if (decisionOut != null) {
          decisionOut.write(tenant, decided, i);
        }
      }
      rows = null;
      decided = null;
      if (progressEvery > 0 && summary.rows() >= nextProgress) {
        nextProgress += progressEvery;
        double s = (System.nanoTime() - started) / 1e9;
        err.printf("fcap replay: %,d rows, %.1f s, %,.0f rows/s%n", summary.rows(), s, summary.rows() / s);
        err.flush();
      }
    }
  }

  private int fail(String message) {
    spec.commandLine().getErr().println("fcap replay: " + Printable.escape(message));
    return 2;
  }

  /**
   * The store as {@code fcap serve} opens it ({@link Backends}), in memory only (bounded by half the
   * heap), and on Redis under a key prefix of this run's own, so that live counters are never touched
   * (its own keys expire by themselves).
   */
  private Store openStore(Clock clock) {
    String run = Long.toString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    ServerConfig config = ConfigLoader.load(null, Map.of(), Map.of("store.uri", withPrefix(storeUri, "replay-" + run + ":"),
        "store.maxBytes", Long.toString(Runtime.getRuntime().maxMemory() / 2), "store.fsync", "off"));
    return Backends.store(config, clock);
  }

  /** {@code uri} with {@code prefix=PREFIX} among its parameters (before a Sentinel URI's {@code #master}). */
  static String withPrefix(String uri, String prefix) {
    if (!uri.contains("://")) {
      return uri;
    }
    int from = Math.max(uri.indexOf("://") + 3, uri.lastIndexOf('@') + 1); // a raw password may hold ? and #
    int hash = uri.indexOf('#', from);
    String base = hash < 0 ? uri : uri.substring(0, hash);
    int q = base.indexOf('?', from);
    if (q >= 0 && ("&" + base.substring(q + 1)).contains("&prefix=")) {
      throw new IllegalArgumentException("replay keeps its counters under a key prefix of its own (live counters are "
          + "never touched): drop ?prefix= from the URI");
    }
    return base + (q < 0 ? "?" : "&") + "prefix=" + prefix + (hash < 0 ? "" : uri.substring(hash));
  }

  /** The log as UTF-8 text; {@link SendLogCsv} buffers it. */
  private static Reader open(String log) throws IOException {
    if (log.equals("-")) {
      return new InputStreamReader(System.in, StandardCharsets.UTF_8);
    }
    return new InputStreamReader(Files.newInputStream(Path.of(log)), StandardCharsets.UTF_8);
  }

  /** The replay's clock: the timestamp of the row being decided. */
  static final class ReplayClock implements Clock {
    long time;

    @Override
    public long millis() {
      return time;
    }
  }
}
