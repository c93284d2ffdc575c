package dev.fcap.cli;

import dev.fcap.server.ConfigLoader;
import dev.fcap.server.FatalErrors;
import dev.fcap.server.FcapServer;
import dev.fcap.server.ServerConfig;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code fcap serve}: runs the server until interrupted (Ctrl-C or SIGTERM shut it down gracefully). */
@Command(name = "serve", mixinStandardHelpOptions = true,
    description = {"Serve the fcap HTTP/JSON and gRPC API.",
        "Settings come from defaults, then --config (or FCAP_CONFIG), then FCAP_* environment variables, then the "
            + "flags below. See docs/server.md for every setting."})
final class ServeCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--config", description = "a fcap.yaml config file (default: $FCAP_CONFIG, else none)")
  Path config;

  @Option(names = "--listen", description = "HOST:PORT to listen on (setting listen; default 127.0.0.1:8080)")
  String listen;

  @Option(names = "--data-dir", description = "directory of the rules file, the audit file and the embedded "
      + "store's state (setting dataDir; default data)")
  String dataDir;

  @Option(names = "--store", description = "store URI (setting store.uri; default memory)")
  String store;

  @Option(names = "--rules", description = "rules file (setting rules.source; default DATADIR/rules.yaml, seeded from "
      + "examples/rules.yaml)")
  String rules;

  @Option(names = "--audit", description = "audit sink: none or file:PATH (setting audit.sink; default "
      + "file:DATADIR/audit.jsonl)")
  String audit;

  @Override
  public Integer call() throws InterruptedException {
    Map<String, String> env = System.getenv();
    Path file = config != null ? config : env.containsKey("FCAP_CONFIG") ? Path.of(env.get("FCAP_CONFIG")) : null;
    Map<String, String> overrides = new LinkedHashMap<>();
    put(overrides, "listen", listen);
    put(overrides, "dataDir", dataDir);
    put(overrides, "store.uri", store);
    put(overrides, "rules.source", rules);
    put(overrides, "audit.sink", audit);
    java.io.PrintWriter err = spec.commandLine().getErr();
    ServerConfig cfg;
    FcapServer server;
    try {
      cfg = ConfigLoader.load(file, env, overrides);
      server = FcapServer.start(cfg);
    } catch (ConfigLoader.ConfigException e) {
      err.println("fcap serve: configuration error: " + dev.fcap.uri.Redaction.uri(e.getMessage()));
      return 2;
    } catch (dev.fcap.policy.PolicyException e) {
      err.println("fcap serve: the rules are invalid, fix them and start again:");
      e.errors().forEach(error -> err.println("  " + error));
      return 2;
    } catch (RuntimeException e) {
      err.println("fcap serve: cannot start: " + dev.fcap.uri.Redaction.uri(e.getMessage()));
      return 1;
    }
    // from here this process is a server: a dead fcap thread or an Error ends it (FatalErrors)
    FatalErrors.install(FatalErrors.Halt.EXIT);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      org.slf4j.LoggerFactory.getLogger(ServeCommand.class).info("shutting down: finishing in-flight requests, "
          + "flushing the audit");
      server.close();
      stopped.countDown();
    }, "fcap-shutdown"));
    org.slf4j.LoggerFactory.getLogger(ServeCommand.class).info(server.describe());
    stopped.await();
    return 0;
  }

  private static void put(Map<String, String> m, String key, String value) {
    if (value != null) {
      m.put(key, value);
    }
  }
}
