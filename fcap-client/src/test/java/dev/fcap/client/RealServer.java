package dev.fcap.client;

import dev.fcap.server.ConfigLoader;
import dev.fcap.server.FcapServer;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.memory.MemoryStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A real fcap server in this JVM on a loopback port, with its rules file in a temporary directory.
 * Its store outlives it ({@link #restart()} starts a new server on the same port and the same
 * counters, as a server on Redis would find them), so a test can stop the server under a client.
 */
final class RealServer implements AutoCloseable {
  static final String RULES = """
      policies:
        - tenant: default
          rules:
            - {id: per-hour, limit: 1000, window: 1h, key: [recipient]}
            - {id: same-content-per-59s, limit: 2, window: 59s, key: [recipient, content]}
      """;
  private final Path dir;
  private final int port;
  private final Map<String, String> settings;
  private final SharedStore store = new SharedStore(MemoryStore.builder().build());
  private volatile FcapServer server;

  private RealServer(String rules, Map<String, String> settings) throws IOException {
    this.dir = Files.createTempDirectory("fcap-client-test");
    Files.writeString(dir.resolve("rules.yaml"), rules);
    this.port = freePort();
    this.settings = settings;
    this.server = open();
  }

  static RealServer start() {
    return start(RULES, Map.of());
  }

  static RealServer start(String rules, Map<String, String> settings) {
    try {
      return new RealServer(rules, settings);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  String url() {
    return "http://127.0.0.1:" + port;
  }

  int port() {
    return port;
  }

  /** Stops taking requests; in-flight ones finish. */
  void stop() {
    FcapServer s = server;
    server = null;
    if (s != null) {
      s.close();
    }
  }

  /** A new server on the same port and store. */
  void restart() {
    stop();
    server = open();
  }

  private FcapServer open() {
    Map<String, String> all = new HashMap<>();
    all.put("listen", "127.0.0.1:" + port);
    all.put("rules.source", dir.resolve("rules.yaml").toString());
    all.put("audit.sink", "none");
    all.put("shutdown.grace", "1s");
    all.putAll(settings);
    return FcapServer.builder(ConfigLoader.load(null, Map.of(), all)).store(store).start();
  }

  @Override
  public void close() {
    stop();
    store.delegate.close();
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The counters, kept when a server closes its store. */
  private record SharedStore(Store delegate) implements Store {
    @Override
    public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
      return delegate.apply(request);
    }

    @Override
    public CompletableFuture<List<PartitionResult>> applyAll(List<PartitionRequest> requests) {
      return delegate.applyAll(requests);
    }

    @Override
    public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
      return delegate.read(partition);
    }

    @Override
    public CompletableFuture<Boolean> delete(byte[] partition) {
      return delegate.delete(partition);
    }

    @Override
    public long now() {
      return delegate.now();
    }

    @Override
    public void close() {
      // the next server uses the same counters
    }
  }
}
