package dev.fcap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * {@code fcap serve} as a real JVM process in a working directory, as an operator runs it: the
 * shaded {@code fcap.jar} when the build made it, else the test classpath. Stopped with
 * {@link #kill()} (SIGKILL) or {@link #stop()} (SIGTERM, graceful).
 */
final class ServerProcess implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern LISTENING = Pattern.compile("fcap listening on (http://[0-9.]+:\\d+)");
  final Path workDir;
  final Path log;
  final Process process;
  final String base;
  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(2)).build();

  private ServerProcess(Path workDir, Path log, Process process, String base) {
    this.workDir = workDir;
    this.log = log;
    this.process = process;
    this.base = base;
  }

  /** Starts {@code fcap serve --listen 127.0.0.1:0 EXTRA...} in {@code workDir}; waits until it listens. */
  static ServerProcess start(Path workDir, String... extra) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx512m");
    Path jar = Path.of(System.getProperty("user.dir"), "target", "fcap.jar");
    if (Files.isRegularFile(jar)) {
      cmd.add("-jar");
      cmd.add(jar.toString());
    } else {
      cmd.add("-cp");
      cmd.add(System.getProperty("java.class.path"));
      cmd.add(Fcap.class.getName());
    }
    cmd.add("serve");
    cmd.add("--listen");
    cmd.add("127.0.0.1:0");
    cmd.addAll(List.of(extra));
    Path log = Files.createTempFile(workDir.getParent(), "serve", ".log");
    Process p = new ProcessBuilder(cmd).directory(workDir.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    try {
      String url = Awaitility.await("the start line of fcap serve").atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(20)).pollInSameThread().until(() -> listening(p, log), Objects::nonNull);
      return new ServerProcess(workDir, log, p, url);
    } catch (ConditionTimeoutException e) {
      p.destroyForcibly();
      throw new IllegalStateException("fcap serve did not start within 60 s:\n" + Files.readString(log), e);
    }
  }

  /** The address in the log's start line; null while there is none. */
  private static String listening(Process p, Path log) throws IOException {
    Matcher m = LISTENING.matcher(Files.readString(log));
    if (m.find()) {
      return m.group(1);
    }
    if (!p.isAlive()) {
      throw new IllegalStateException("fcap serve exited with " + p.exitValue() + ":\n" + Files.readString(log));
    }
    return null;
  }

  String output() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** POSTs JSON; returns the parsed reply (status in {@code _status}). */
  JsonNode post(String path, String body) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException(path + " answered " + r.statusCode() + ": " + r.body());
    }
    return JSON.readTree(r.body());
  }

  JsonNode get(String path) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException(path + " answered " + r.statusCode() + ": " + r.body());
    }
    return JSON.readTree(r.body());
  }

  /** {@code used} of one rule in a recipient's inspection (0 when the recipient holds nothing). */
  long used(String recipient, String rule) throws IOException, InterruptedException {
    for (JsonNode c : get("/v1/recipients/" + recipient).path("counters")) {
      if (c.path("rule").asText().equals(rule)) {
        return c.path("used").asLong();
      }
    }
    return 0;
  }

  /** SIGKILL: no shutdown hook, nothing flushed. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /** SIGTERM: the graceful shutdown. */
  void stop() throws InterruptedException {
    process.destroy();
    process.waitFor();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      kill();
    }
  }
}
