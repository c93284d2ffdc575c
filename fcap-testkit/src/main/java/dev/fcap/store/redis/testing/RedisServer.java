package dev.fcap.store.redis.testing;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One real {@code redis-server} process on a loopback port, with its own directory. Started and
 * stopped by the tests (and benchmarks); never a mock. A missing {@code redis-server} binary is a
 * loud failure: install Debian's {@code redis-server} and {@code redis-tools}.
 */
public final class RedisServer implements AutoCloseable {
  private final Path dir;
  private final int port;
  private final List<String> args;
  private Process process;

  private RedisServer(Path dir, int port, List<String> args) {
    this.dir = dir;
    this.port = port;
    this.args = args;
  }

  /** Starts {@code redis-server} on {@code port} in {@code dir} with extra arguments; waits until it answers. */
  public static RedisServer start(Path dir, int port, String... extra) throws IOException {
    return startUnder(List.of(), dir, port, extra);
  }

  /**
   * As {@link #start}, the server run by a tool that takes its command line after its own (e.g.
   * {@code valgrind --tool=callgrind}, for a benchmark that counts the server's instructions).
   */
  public static RedisServer startUnder(List<String> tool, Path dir, int port, String... extra) throws IOException {
    Files.createDirectories(dir);
    List<String> args = new ArrayList<>(tool);
    args.add(binary("redis-server"));
    args.addAll(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--dir", dir.toString(), "--protected-mode", "no"));
    args.addAll(List.of(extra));
    RedisServer server = new RedisServer(dir, port, List.copyOf(args));
    server.startProcess();
    return server;
  }

  /** Starts a process from a full command line (e.g. a sentinel from its config file). */
  static RedisServer startCommand(Path dir, int port, List<String> command) throws IOException {
    RedisServer server = new RedisServer(dir, port, List.copyOf(command));
    server.startProcess();
    return server;
  }

  private void startProcess() throws IOException {
    process = new ProcessBuilder(args).directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile()))
        .start();
    awaitReady();
  }

  private void awaitReady() throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      if (!process.isAlive()) {
        throw new IOException("redis on port " + port + " exited with " + process.exitValue() + ": " + log());
      }
      try {
        if ("PONG".equals(Resp.once(port, "PING"))) {
          return;
        }
      } catch (IOException | Resp.RespError e) {
        // not ready yet (LOADING, or not listening)
      }
      if (System.nanoTime() > deadline) {
        throw new IOException("redis on port " + port + " did not answer PING within 20 s: " + log());
      }
      sleep(20);
    }
  }

  /** The absolute path of a Redis binary on the PATH; fails loudly if it is missing. */
  public static String binary(String name) {
    return onPath(name, "The Redis tests need real Redis processes: apt-get install redis-server redis-tools "
        + "(scripts/test does this)");
  }

  /** The absolute path of a program on the PATH; fails loudly, with {@code install} (what to do), if it is missing. */
  public static String onPath(String name, String install) {
    String path = System.getenv("PATH");
    for (String d : (path == null ? "/usr/bin:/usr/local/bin" : path).split(File.pathSeparator)) {
      File f = new File(d, name);
      if (f.canExecute()) {
        return f.getAbsolutePath();
      }
    }
    throw new IllegalStateException(name + " is not installed (not on PATH). " + install);
  }

  /** A port on 127.0.0.1 that was free just now; with {@code busToo}, port + 10000 too (cluster bus). */
  public static int freePort(boolean busToo) throws IOException {
    for (int attempt = 0; attempt < 100; attempt++) {
      int port;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        port = s.getLocalPort();
      }
      if (!busToo) {
        return port;
      }
      if (port + 10000 <= 65535) {
        try (ServerSocket bus = new ServerSocket(port + 10000, 1, InetAddress.getLoopbackAddress())) {
          return port;
        } catch (IOException taken) {
          // try another
        }
      }
    }
    throw new IOException("no free port pair found");
  }

  /** The process id (the tool's, when run under one that execs nothing else, as valgrind does). */
  public long pid() {
    return process.pid();
  }

  public int port() {
    return port;
  }

  public Path dir() {
    return dir;
  }

  public boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** Sends one command to this server (harness connection, not the client under test). */
  public Object call(Object... command) throws IOException {
    return Resp.once(port, command);
  }

  /** A field of INFO, e.g. {@code used_memory}. */
  public String info(String section, String field) throws IOException {
    String info = (String) call("INFO", section);
    for (String line : info.split("\r\n")) {
      if (line.startsWith(field + ":")) {
        return line.substring(field.length() + 1);
      }
    }
    return null;
  }

  /** Stops the process gracefully (SIGTERM) and waits. */
  public void stop() {
    if (process != null && process.isAlive()) {
      process.destroy();
      await();
    }
  }

  /** Kills the process (SIGKILL), as a crash would. */
  public void kill() {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      await();
    }
  }

  /** Freezes the process (SIGSTOP): it keeps its connections and data but answers nothing. */
  public void pause() throws IOException {
    signal("STOP");
  }

  /** Thaws a paused process (SIGCONT). */
  public void resume() throws IOException {
    signal("CONT");
  }

  private void signal(String name) throws IOException {
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IOException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  /** Starts the process again on the same port and directory. */
  public void restart() throws IOException {
    stop();
    startProcess();
  }

  private void await() {
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The tail of the server's log, for failure messages. */
  public String log() {
    try {
      String all = Files.readString(dir.resolve("server.log"));
      return all.length() > 2000 ? all.substring(all.length() - 2000) : all;
    } catch (IOException e) {
      return "(no log)";
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public void close() {
    stop();
  }
}
