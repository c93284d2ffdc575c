package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./fcap} launcher: against a build that rewrites {@code fcap.jar} in place while the
 * server runs (the server keeps answering, and stops on SIGTERM, because it runs a copy of the jar),
 * and the JVM options it always passes.
 */
class LauncherIT {
  private static final Pattern LISTENING = Pattern.compile("fcap listening on (http://[0-9.]+:\\d+)");
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(2)).build();

  @TempDir
  Path tmp;

  @Test
  void aJarRewrittenUnderARunningServerChangesNothingItAnswers() throws Exception {
    Path root = checkout();
    Path launcher = root.resolve("fcap");
    Path jar = root.resolve("fcap-cli/target/fcap.jar");
    Path work = Files.createDirectory(tmp.resolve("work"));
    Path log = tmp.resolve("serve.log");

    ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "serve", "--listen", "127.0.0.1:0")
        .directory(work.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + System.getenv("PATH"));
    pb.environment().put("FCAP_JAVA_OPTS", "-Xmx256m");
    Process p = pb.start();
    try {
      String base = awaitListening(p, log);
      assertThat(status(base, "POST", "/v1/decisions", "{\"recipient\": \"r\"}")).isEqualTo(200);

      // what a build does to the jar: the same file, truncated and written again
      Files.write(jar, new byte[4096], StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);

      assertThat(status(base, "GET", "/metrics", null)).as(Files.readString(log)).isEqualTo(200);
      assertThat(status(base, "GET", "/v1/rules/history", null)).as(Files.readString(log)).isEqualTo(200);
      assertThat(status(base, "GET", "/v1/recipients/r", null)).as(Files.readString(log)).isEqualTo(200);
      assertThat(status(base, "POST", "/v1/decisions/batch", "{\"requests\": [{\"recipient\": \"b\"}]}"))
          .as(Files.readString(log)).isEqualTo(200);
      p.destroy();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("SIGTERM stops it:\n" + Files.readString(log)).isTrue();
      assertThat(Files.readString(log)).doesNotContain("NoClassDefFoundError").doesNotContain("ZipException");
    } finally {
      p.destroyForcibly();
    }
  }

  /** Out of memory, the JVM exits (a supervisor restarts it), whatever FCAP_JAVA_OPTS says. */
  @Test
  void theJvmExitsOnOutOfMemoryWhateverTheOptions() throws Exception {
    Path root = checkout();
    Path bin = Files.createDirectory(tmp.resolve("bin"));
    Path java = bin.resolve("java");
    Files.writeString(java, "#!/bin/sh\necho \"java $*\"\n");
    Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    for (String opts : new String[] {null, "-Xmx64m"}) {
      ProcessBuilder pb = new ProcessBuilder(root.resolve("fcap").toString(), "serve").redirectErrorStream(true);
      pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
      pb.environment().remove("FCAP_JAVA_OPTS");
      if (opts != null) {
        pb.environment().put("FCAP_JAVA_OPTS", opts);
      }
      Process p = pb.start();
      String out = new String(p.getInputStream().readAllBytes());
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(out).as("FCAP_JAVA_OPTS=%s", opts).startsWith("java -XX:+ExitOnOutOfMemoryError ")
          .contains(" serve");
    }
  }

  /**
   * A real out-of-memory: {@code ./fcap serve} on a 40 MB heap, sent batches it cannot hold, exits
   * (status 3, the JVM's) instead of living on with threads killed by {@code OutOfMemoryError}.
   */
  @Test
  void outOfMemoryEndsTheServer() throws Exception {
    Path root = checkout();
    Path work = Files.createDirectory(tmp.resolve("work"));
    Path log = tmp.resolve("serve.log");
    ProcessBuilder pb = new ProcessBuilder(root.resolve("fcap").toString(), "serve", "--listen", "127.0.0.1:0")
        .directory(work.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + System.getenv("PATH"));
    pb.environment().put("FCAP_JAVA_OPTS", "-Xmx40m");
    Process p = pb.start();
    try {
      String base = awaitListening(p, log);
      StringBuilder body = new StringBuilder("{\"requests\": [");
      for (int i = 0; i < 10_000; i++) {
        body.append(i == 0 ? "" : ",").append("{\"recipient\": \"r").append(i).append("\", \"attributes\": {\"a\": \"")
            .append("x".repeat(60)).append("\", \"b\": \"").append("y".repeat(60)).append("\"}}");
      }
      HttpRequest batch = HttpRequest.newBuilder(URI.create(base + "/v1/decisions/batch"))
          .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body.append("]}").toString())).build();
      for (int round = 0; round < 20 && p.isAlive(); round++) {
        List<CompletableFuture<HttpResponse<Void>>> sent = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
          sent.add(http.sendAsync(batch, HttpResponse.BodyHandlers.discarding()));
        }
        sent.forEach(f -> f.handle((r, e) -> null).join()); // answered or cut off by the exit: either is fine
      }
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the server exits:\n" + Files.readString(log)).isTrue();
      assertThat(p.exitValue()).isEqualTo(3);
      assertThat(Files.readString(log)).contains("Terminating due to java.lang.OutOfMemoryError");
    } finally {
      p.destroyForcibly();
    }
  }

  /** A checkout with the launcher and an up-to-date {@code fcap-cli/target/fcap.jar}: the launcher builds nothing. */
  private Path checkout() throws IOException {
    Path built = Path.of(System.getProperty("user.dir"), "target", "fcap.jar");
    assertThat(built).as("the shaded jar (the package phase makes it)").isRegularFile();
    Path root = Files.createDirectory(tmp.resolve("checkout"));
    Path launcher = root.resolve("fcap");
    Files.copy(Path.of(System.getProperty("user.dir"), "..", "fcap"), launcher);
    Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.writeString(root.resolve("pom.xml"), "<project/>\n");
    Files.setLastModifiedTime(root.resolve("pom.xml"), FileTime.from(Instant.now().minus(Duration.ofDays(1))));
    Files.copy(built, Files.createDirectories(root.resolve("fcap-cli/target")).resolve("fcap.jar"));
    return root;
  }

  private static String awaitListening(Process p, Path log) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      Matcher m = LISTENING.matcher(Files.readString(log));
      if (m.find()) {
        return m.group(1);
      }
      assertThat(p.isAlive()).as("fcap serve exited:\n" + Files.readString(log)).isTrue();
      Thread.sleep(20); // polling the log for the start line, bounded by the deadline
    }
    throw new AssertionError("fcap serve did not start within 60 s:\n" + Files.readString(log));
  }

  private int status(String base, String method, String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode();
  }
}
