package dev.fcap.client;

import dev.fcap.server.ConfigLoader;
import dev.fcap.server.FcapServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A real fcap server in this JVM on a loopback port, with its rules file and its durable embedded
 * store in a temporary directory: {@link #restart()} stops it (gracefully: in-flight requests finish,
 * the store is flushed) and starts a new server on the same port and directory, which recovers the
 * counters and message ids, so a test can restart the server under a client. With a {@code store.uri}
 * setting the store is that Redis instead, and a restart finds the counters there.
 */
final class RealServer implements AutoCloseable {
  static final String RULES = """
      policies:
        - tenant: default
          rules:
            - {id: per-hour, limit: 200, window: 1h, key: [recipient]}
            - {id: same-content-per-59s, limit: 2, window: 59s, key: [recipient, content]}
      """;
  private final Path dir;
  private final int port;
  private final Map<String, String> settings;
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

  /** A new server on the same port and store directory. */
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
    if (!settings.containsKey("store.uri")) {
      all.put("store.dir", dir.resolve("store").toString());
    }
    all.putAll(settings);
    return FcapServer.builder(ConfigLoader.load(null, Map.of(), all)).start();
  }

  @Override
  public void close() {
    stop();
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
