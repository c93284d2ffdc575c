package dev.fcap.server;

import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.grpc.GrpcSerializationFormats;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.file.HttpFile;
import com.linecorp.armeria.server.grpc.GrpcService;
import dev.fcap.engine.Engine;
import dev.fcap.server.admin.RulesAdmin;
import dev.fcap.server.admin.RulesSource;
import dev.fcap.server.audit.AuditLog;
import dev.fcap.server.audit.AuditSink;
import dev.fcap.server.audit.RecentDenials;
import dev.fcap.server.auth.Authenticator;
import dev.fcap.server.decision.DecisionService;
import dev.fcap.server.failure.FailoverStore;
import dev.fcap.server.failure.Scheduler;
import dev.fcap.server.grpc.GrpcApi;
import dev.fcap.server.grpc.GrpcShapeCheck;
import dev.fcap.server.guard.ThrottledLog;
import dev.fcap.server.http.ConsoleRoutes;
import dev.fcap.server.http.HttpApi;
import dev.fcap.server.http.JsonErrorHandler;
import dev.fcap.server.http.RequestGuard;
import dev.fcap.server.metrics.MeteredStore;
import dev.fcap.server.metrics.ServerMetrics;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.time.Clock;
import dev.fcap.time.SlewingClock;
import dev.fcap.uri.Redaction;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fcap server: HTTP/JSON and gRPC on one port.
 *
 * <p>Wiring, from the store up: the {@link Store}, decorated by {@link FailoverStore} (deadline per
 * call, outage, local store, write-back) and then {@link MeteredStore} (outermost, so it times what the
 * engine waits for); one {@link Engine} on that chain; policies kept by {@link RulesAdmin} from a
 * {@link RulesSource}; the {@link DecisionService} (roles, batches, the failure policy's allow/deny,
 * metrics, audit); the {@link HttpApi} and {@link GrpcApi} authenticate, parse and render. A call runs
 * transport -> decision service -> engine -> metered -> failover -> store. {@link #close()} stops taking
 * requests, lets in-flight ones finish (up to {@code shutdown.grace}), then flushes the audit.
 *
 * <p>Time: the embedded store (and so the engine, which reads the store's clock) counts on a
 * {@link SlewingClock} that follows the wall clock without stepping; everything else (deadlines,
 * audit times, logs) reads the wall clock.
 */
public final class FcapServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FcapServer.class);
  private final ServerConfig config;
  private final Server server;
  private final ServerMetrics metrics;
  private final AuditLog audit;
  private final RulesAdmin rules;
  private final Engine engine;
  private final FailoverStore failover;
  private final ScheduledExecutorService scheduler;
  private final ExecutorService delivery;
  private final Store store;
  /** The embedded store's clock; null for a store that keeps its own time (Redis TIME) or one given by the embedder. */
  private final SlewingClock storeClock;

  private FcapServer(ServerConfig config, Store storeOverride, Clock clock, LongSupplier monotonicNanos)
      throws IOException {
    this.config = config;
    // the port, then what the config names: a mistake there fails before any thread is started,
    // and a port in use before anything is written
    String host = bindHost(config);
    StartChecks.portFree(host, config.listenPort());
    this.storeClock = storeOverride == null && config.storeUri().equals("memory")
        ? SlewingClock.following(clock, monotonicNanos, FcapServer::wallClockStepped) : null;
    Store raw = storeOverride != null ? storeOverride : openStore(config, storeClock != null ? storeClock : clock);
    RulesSource source;
    AuditSink sink;
    try {
      source = openRules(config, clock);
      sink = openAudit(config);
    } catch (RuntimeException | IOException e) {
      raw.close(); // a durable store holds its state directory's lock
      throw e;
    }
    this.store = raw;
    this.metrics = new ServerMetrics(config.safeguards().metricsMaxTenants(),
        config.safeguards().metricsMaxRulesPerTenant());
    ScheduledThreadPoolExecutor timers = FatalErrors.scheduler("fcap-scheduler");
    timers.setRemoveOnCancelPolicy(true); // most deadlines are cancelled: the store answered
    this.scheduler = timers;
    registerStoreGauges(raw);
    registerClockMeters();
    this.delivery = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()), r -> {
      Thread t = new Thread(r, "fcap-store-answers");
      t.setDaemon(true);
      return t;
    });
    // the engine comes after the chain: the longest window is read from it when a loss is noticed
    Store chain = raw.decorate(FailoverStore.newDecorator(config.failure(), clock, Scheduler.of(scheduler), delivery,
        this::longestWindowMs)).decorate(MeteredStore.newDecorator(metrics));
    this.failover = chain.as(FailoverStore.class).orElseThrow();
    metrics.gauge("fcap_store_up", "1 while the store answers, 0 during an outage (failure policy in force)",
        failover, f -> f.down() ? 0 : 1);
    metrics.gauge("fcap_store_full", "1 while the embedded store is full: it refused a new recipient within the last "
        + "10 failure.probeInterval (failure.full decides new recipients)", failover, f -> f.full() ? 1 : 0);
    metrics.functionCounter("fcap_store_outages", "outages declared (the store failed for failure.window)",
        failover, FailoverStore::outages);
    metrics.functionCounter("fcap_store_written_back", "decisions of the outage store written back to the store",
        failover, FailoverStore::writtenBack);
    metrics.functionCounter("fcap_store_resets", "losses of the shared store's data noticed (its identity key "
        + "missing or replaced: a Redis restarted empty or flushed)", failover, FailoverStore::resets);
    metrics.gauge("fcap_store_reset_policy", "1 while the failure policy decides because the store lost its data "
        + "(failure.storeReset: policy, until the longest window has passed)", failover, f -> f.resetUntil() > 0 ? 1 : 0);
    metrics.functionCounter("fcap_store_late_released", "admissions answered after their deadline and released",
        failover, FailoverStore::lateReleases);
    Engine.Builder engineBuilder = Engine.builder(chain).clock(chain::now);
    if (config.releaseHorizon() != null) {
      engineBuilder.releaseHorizon(config.releaseHorizon());
    }
    this.engine = engineBuilder.build();
    this.audit = new AuditLog(sink, config.auditSampleAdmissions(), config.auditQueue(), recentDenials(config));
    metrics.functionCounter("fcap_audit_dropped", "audit events dropped (queue full or sink failing)", audit,
        AuditLog::dropped);
    metrics.functionCounter("fcap_audit_written", "audit events written", audit, AuditLog::written);
    this.rules = new RulesAdmin(source, engine, clock, audit, metrics, config.rulesHistory(),
        config.safeguards().limits().maxRulesPerPolicy());
    metrics.ruleLimits(rules::policies);
    metrics.functionCounter("fcap_rules_reload_failures", "changes of the rules source refused or not applied (the "
        + "rules in force stay)", source, RulesSource::reloadFailures);
    try {
      rules.start();
      ThrottledLog authLog = new ThrottledLog(LoggerFactory.getLogger(Authenticator.class), clock,
          ThrottledLog.DEFAULT_INTERVAL_MS);
      Authenticator auth = new Authenticator(config.apiKeys(), reason -> {
        metrics.authFailure(reason);
        authLog.warn("request refused: " + reason + " API key (every refusal is counted in fcap_auth_failures_total)");
      });
      DecisionService decisions = new DecisionService(engine, failover, config.failure(), audit, metrics, clock,
          config.maxBatch());
      this.server = buildServer(config, host, decisions, auth, clock);
      server.start().join();
    } catch (RuntimeException | IOException e) {
      // invalid rules, a port taken since it was checked: release what was started before failing
      rules.close();
      audit.close();
      engine.close();
      scheduler.shutdownNow();
      delivery.shutdownNow();
      metrics.close();
      if (StartChecks.isBindFailure(e)) {
        throw StartChecks.bindFailed(host, config.listenPort(), e);
      }
      throw e;
    }
  }

  private static RecentDenials recentDenials(ServerConfig config) {
    return config.recentDenialsFile() == null ? new RecentDenials(config.recentDenials(), config.recentRecipients())
        : RecentDenials.savedIn(config.recentDenialsFile(), config.recentDenials(), config.recentRecipients());
  }

  /** {@link Backends#store}, with a state directory that cannot be used named with its setting and why. */
  private static Store openStore(ServerConfig config, Clock clock) {
    try {
      return Backends.store(config, clock);
    } catch (UncheckedIOException e) {
      if (config.storeUri().equals("memory") && config.storeDurability() != null) {
        Path dir = config.storeDurability().dir();
        throw StartChecks.pathFailed("store.dir", dir, dir, e);
      }
      throw e;
    }
  }

  private static RulesSource openRules(ServerConfig config, Clock clock) throws IOException {
    try {
      return Backends.rulesSource(config, clock);
    } catch (IOException | UncheckedIOException e) {
      Path file = Backends.rulesFile(config).orElse(null);
      if (file == null) {
        throw e;
      }
      throw StartChecks.pathFailed("rules.source", file, parentOf(file), e);
    }
  }

  private static AuditSink openAudit(ServerConfig config) throws IOException {
    try {
      return Backends.auditSink(config);
    } catch (IOException | UncheckedIOException e) {
      if (!config.auditSink().startsWith("file:")) {
        throw e;
      }
      Path file = Path.of(config.auditSink().substring("file:".length()));
      throw StartChecks.pathFailed("audit.sink", file, parentOf(file), e);
    }
  }

  private static Path parentOf(Path file) {
    Path parent = file.toAbsolutePath().getParent();
    return parent == null ? file : parent;
  }

  /** Starts a server as configured. */
  public static FcapServer start(ServerConfig config) {
    return builder(config).start();
  }

  public static Builder builder(ServerConfig config) {
    return new Builder(config);
  }

  private Server buildServer(ServerConfig config, String host, DecisionService decisions, Authenticator auth,
      Clock clock) {
    ServerBuilder sb = Server.builder();
    sb.http(new InetSocketAddress(host, config.listenPort()));
    sb.maxRequestLength(config.maxBodyBytes());
    sb.requestTimeout(config.safeguards().requestTimeout());
    sb.gracefulShutdownTimeout(Duration.ofMillis(100), config.shutdownGrace());
    sb.bossGroupFactory(PromptBossGroup::new);
    // Host, Origin, content type, key before body, body shape: before any route (docs/security.md)
    RequestGuard guard = new RequestGuard(auth, config.safeguards(), host, metrics, new ThrottledLog(
        LoggerFactory.getLogger(RequestGuard.class), clock, ThrottledLog.DEFAULT_INTERVAL_MS));
    sb.decorator(guard);
    sb.errorHandler(new JsonErrorHandler(guard));
    new HttpApi(decisions, rules, auth, metrics, config.safeguards().limits()).bind(sb);
    // protobuf only: the gRPC-JSON marshaller costs seconds of start-up (bytecode generation); JSON has its own API
    sb.service(GrpcService.builder().supportedSerializationFormats(GrpcSerializationFormats.PROTO)
        .addService(new GrpcApi(decisions, rules, auth))
        .intercept(new GrpcShapeCheck(config.safeguards().limits())).build());
    // the operator console: static files at / and /console/, a client of the API above (docs/console.md)
    ConsoleRoutes.bind(sb);
    // the OpenAPI 3.1 description of the HTTP API, public like the console (OpenApiIT keeps it true)
    sb.service("/openapi.json", HttpFile.builder(FcapServer.class.getClassLoader(), "fcap/openapi.json")
        .contentType(MediaType.JSON_UTF_8).cacheControl("no-cache").build().asService());
    return sb.build();
  }

  /** Without API keys the server only ever binds to loopback, whatever {@code listen} says. */
  private static String bindHost(ServerConfig config) {
    if (!config.loopbackOnly()) {
      return config.listenHost();
    }
    try {
      if (InetAddress.getByName(config.listenHost()).isLoopbackAddress()) {
        return config.listenHost();
      }
    } catch (UnknownHostException e) {
      // fall through to loopback
    }
    LOG.warn("no API keys configured: listening on 127.0.0.1 instead of {} (configure apiKeys to listen elsewhere)",
        config.listenHost());
    return "127.0.0.1";
  }

  private void registerStoreGauges(Store s) {
    if (s instanceof MemoryStore m) {
      metrics.gauge("fcap_store_partitions", "partitions (recipients and shared keys) held by the memory store", m,
          MemoryStore::size);
      metrics.gauge("fcap_store_bytes", "estimated heap bytes held by the memory store", m, MemoryStore::bytes);
      metrics.gauge("fcap_store_max_bytes", "the most heap the memory store may hold (store.maxBytes)", m,
          MemoryStore::maxBytes);
      metrics.functionCounter("fcap_store_rejected", "requests refused because the memory store was full", m,
          MemoryStore::rejected);
    }
  }

  private void registerClockMeters() {
    if (storeClock == null) {
      return;
    }
    metrics.functionCounter("fcap_clock_steps", "steps of the wall clock over " + SlewingClock.STEP_THRESHOLD_MS
        + " ms seen by the embedded store's time, which absorbs them gradually instead of stepping", storeClock,
        SlewingClock::steps);
    metrics.gauge("fcap_clock_offset_seconds", "the wall clock minus the embedded store's time: steps still being "
        + "absorbed (0 without steps)", storeClock, c -> c.offsetMillis() / 1000.0);
  }

  private static void wallClockStepped(long stepMs, long offsetMs) {
    LOG.warn("the wall clock stepped {} s; the store's time does not step: it follows the wall clock at {} % of real "
        + "time, with {} s to absorb (in about {} s); windows are neither freed nor frozen by the step "
        + "(counted in fcap_clock_steps_total; restart to take a step at once)", seconds(stepMs),
        Math.round(SlewingClock.RATE * 100), seconds(offsetMs),
        Math.round(Math.abs(offsetMs) / 1000.0 / SlewingClock.RATE));
  }

  /**
   * The longest window of the counting rules in force, of every tenant (0 before the engine is built):
   * how long a store that lost its data may still be missing counts that matter.
   */
  private long longestWindowMs() {
    if (engine == null) {
      return 0;
    }
    return engine.policies().stream().flatMap(p -> p.rules().stream()).filter(r -> !r.isSendWindow())
        .mapToLong(dev.fcap.model.Rule::windowMs).max().orElse(0);
  }

  private static String seconds(long ms) {
    return String.format(Locale.ROOT, "%+.1f", ms / 1000.0);
  }

  /** The port actually bound (useful with {@code listen: 127.0.0.1:0}). */
  public int port() {
    return server.activeLocalPort();
  }

  /** {@code http://host:port}. */
  public String uri() {
    return "http://" + server.activePort().localAddress().getHostString() + ":" + port();
  }

  public ServerConfig config() {
    return config;
  }

  public RulesAdmin rules() {
    return rules;
  }

  public AuditLog audit() {
    return audit;
  }

  public ServerMetrics metrics() {
    return metrics;
  }

  public Engine engine() {
    return engine;
  }

  /** The failover layer of the store chain (outage state, write-back counts). */
  public FailoverStore failover() {
    return failover;
  }

  /** One line for the start log: where, which store, which policies. */
  public String describe() {
    String policies = rules.policies().stream().map(p -> p.tenant() + " v" + p.version() + " (" + p.rules().size()
        + " rules)").collect(Collectors.joining(", "));
    return "fcap listening on " + uri() + " (HTTP/JSON and gRPC); store: " + Redaction.uri(config.storeUri())
        + (store instanceof MemoryStore m ? " (embedded, " + durability(m) + ")" : "") + "; rules: " + rules.describeSource() + " ["
        + (policies.isEmpty() ? "no policies" : policies) + "]; audit: " + Redaction.uri(config.auditSink()) + "; "
        + (config.loopbackOnly() ? "no API keys: loopback only, every local caller may do everything"
            : "API keys: " + config.apiKeys().size());
  }

  private static String durability(MemoryStore m) {
    return m.durability().map(d -> "durable in " + d.dir().toAbsolutePath().normalize() + ", " + d.describe() + "; "
        + m.recoveryReport().orElse("")).orElse("MEMORY ONLY (store.fsync: off): every count is lost on restart");
  }

  /**
   * Graceful: no new requests, in-flight ones finish, then the recent denials are saved, the audit is
   * flushed and the store closed.
   */
  @Override
  public void close() {
    long start = System.nanoTime();
    server.stop().join();
    long stopped = System.nanoTime();
    saveRecentDenials();
    rules.close();
    audit.close();
    engine.close();
    scheduler.shutdownNow();
    delivery.shutdownNow();
    metrics.close();
    LOG.info("stopped: requests drained in {} ms, audit flushed ({} events written, {} dropped) in {} ms",
        (stopped - start) / 1_000_000, audit.written(), audit.dropped(), (System.nanoTime() - stopped) / 1_000_000);
  }

  /** No request is in flight any more: the denials are complete. A failure loses them, never the stop. */
  private void saveRecentDenials() {
    try {
      audit.recent().save();
    } catch (IOException | RuntimeException e) {
      LOG.warn("cannot save the recent denials to {}: {}; they are lost at this stop", config.recentDenialsFile(),
          e.toString());
    }
  }

  /** Starts a server with test or embedding overrides. */
  public static final class Builder {
    private final ServerConfig config;
    private Store store;
    private Clock clock = Clock.system();
    private LongSupplier monotonicNanos = System::nanoTime;

    private Builder(ServerConfig config) {
      this.config = config;
    }

    /** Use this store instead of opening {@code store.uri} (tests, embedding). */
    public Builder store(Store store) {
      this.store = store;
      return this;
    }

    /** The wall clock. */
    public Builder clock(Clock clock) {
      this.clock = clock;
      return this;
    }

    /** The monotonic clock the embedded store's time advances with, in nanoseconds (default {@code System::nanoTime}). */
    public Builder monotonicNanos(LongSupplier monotonicNanos) {
      this.monotonicNanos = monotonicNanos;
      return this;
    }

    public FcapServer start() {
      try {
        return new FcapServer(config, store, clock, monotonicNanos);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
