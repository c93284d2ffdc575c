package dev.fcap.server;

import dev.fcap.server.admin.FileRulesSource;
import dev.fcap.server.admin.RulesSource;
import dev.fcap.server.audit.AuditSink;
import dev.fcap.server.audit.FileAuditSink;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import dev.fcap.time.Clock;
import dev.fcap.uri.Redaction;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * Where the server's state lives, opened from its settings: the store for {@code store.uri}, the
 * {@code rules.source} and the {@code audit.sink}. The built-in ones (memory, files) are made here; any
 * other URI goes to the {@link StoreProvider}s on the class path (fcap-server-redis). The one way to
 * open a store from a URI: {@code fcap serve} and {@code fcap replay} both come here.
 */
public final class Backends {
  private Backends() {}

  /**
   * The store for {@code config.storeUri()}: {@code memory} (bounded by {@code store.maxBytes}, durable
   * as {@code store.fsync} says), or whatever a provider opens.
   *
   * @throws ConfigLoader.ConfigException if nothing handles the URI
   * @throws IllegalArgumentException for a URI a provider handles but cannot read
   */
  public static Store store(ServerConfig config, Clock clock) {
    String uri = config.storeUri();
    if (uri.equals("memory")) {
      fitsTheHeap(config.storeMaxBytes(), Runtime.getRuntime().maxMemory());
      MemoryStore.Builder b = MemoryStore.builder().clock(clock);
      if (config.storeMaxBytes() > 0) {
        b.maxBytes(config.storeMaxBytes());
      }
      if (config.storeDurability() != null) {
        b.durable(config.storeDurability());
      }
      return b.build();
    }
    for (StoreProvider p : ServiceLoader.load(StoreProvider.class)) {
      Optional<Store> s = p.open(uri, clock, config);
      if (s.isPresent()) {
        return s.get();
      }
    }
    throw new ConfigLoader.ConfigException("store.uri: no store handles '" + Redaction.uri(uri) + "'; this build has: memory"
        + ServiceLoader.load(StoreProvider.class).stream().map(p -> ", " + p.type().getSimpleName())
            .collect(Collectors.joining()));
  }

  /**
   * The most of the heap the memory store may be given: the rest is for requests in flight, the
   * journal's buffers and the JVM's own headroom. A store allowed more than the heap holds fills it
   * and fails with {@code OutOfMemoryError} instead of refusing new recipients.
   */
  static final double MAX_HEAP_SHARE = 0.7;

  /** Refuses a {@code store.maxBytes} larger than {@link #MAX_HEAP_SHARE} of {@code heapBytes}, with the numbers. */
  static void fitsTheHeap(long maxBytes, long heapBytes) {
    long most = (long) (heapBytes * MAX_HEAP_SHARE);
    if (maxBytes > most) {
      throw new ConfigLoader.ConfigException("store.maxBytes: " + mib(maxBytes) + " does not fit the heap: the "
          + "memory store may have at most " + Math.round(MAX_HEAP_SHARE * 100) + "% of it, " + mib(most) + " of "
          + mib(heapBytes) + " (-Xmx); lower store.maxBytes (0: a quarter of the heap) or raise -Xmx "
          + "(FCAP_JAVA_OPTS=\"-Xmx...\" ./fcap serve)");
    }
  }

  private static String mib(long bytes) {
    return (bytes >> 20) + " MiB";
  }

  /** The audit sink for {@code config.auditSink()}: {@code none}, {@code file:PATH}, or a provider's. */
  static AuditSink auditSink(ServerConfig config) throws IOException {
    String sink = config.auditSink();
    if (sink.equals("none")) {
      return AuditSink.none();
    }
    if (sink.startsWith("file:")) {
      return new FileAuditSink(Path.of(sink.substring("file:".length())), config.auditMaxFileBytes(),
          config.auditMaxFiles());
    }
    for (StoreProvider p : ServiceLoader.load(StoreProvider.class)) {
      Optional<AuditSink> s = p.auditSink(sink, config);
      if (s.isPresent()) {
        return s.get();
      }
    }
    throw new ConfigLoader.ConfigException("audit.sink: nothing handles '" + Redaction.uri(sink)
        + "'; use none or file:PATH");
  }

  /** The rules file {@code config.rulesSource()} names, or empty for a provider's URI. */
  static Optional<Path> rulesFile(ServerConfig config) {
    String s = config.rulesSource();
    if (s.matches("[a-z][a-z0-9+.-]*://.*")) {
      return Optional.empty();
    }
    return Optional.of(Path.of(s.startsWith("file:") ? s.substring(5) : s));
  }

  /** The rules source for {@code config.rulesSource()}: a YAML file, or a provider's for a URI. */
  static RulesSource rulesSource(ServerConfig config, Clock clock) throws IOException {
    String s = config.rulesSource();
    if (s.matches("[a-z][a-z0-9+.-]*://.*")) {
      for (StoreProvider p : ServiceLoader.load(StoreProvider.class)) {
        Optional<RulesSource> r = p.rulesSource(s, config);
        if (r.isPresent()) {
          return r.get();
        }
      }
      throw new ConfigLoader.ConfigException("rules.source: nothing handles '" + Redaction.uri(s) + "' in this build "
          + "(a Redis rules source comes with fcap-redis); use a YAML file path");
    }
    return new FileRulesSource(Path.of(s.startsWith("file:") ? s.substring(5) : s), config.rulesSeed(), clock,
        config.safeguards().rulesSettle());
  }
}
