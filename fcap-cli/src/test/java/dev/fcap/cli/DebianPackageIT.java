package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Debian package the build makes ({@code target/fcap_VERSION_all.deb}), checked with Debian's own
 * tools (lintian, dpkg-deb, systemd-analyze; scripts/test installs them) and run: unpacked into a
 * scratch root, the server starts from the packaged launcher, configuration and unit's JVM options,
 * decides a message, and stops on SIGTERM as systemd stops it.
 */
class DebianPackageIT {
  static final Path DEB = Path.of(System.getProperty("user.dir"), "target",
      "fcap_" + System.getProperty("fcap.version") + "_all.deb");
  private static final Pattern LISTENING = Pattern.compile("fcap listening on (http://[0-9.]+:\\d+)");

  @TempDir static Path scratch;
  static Path root;

  @BeforeAll
  static void unpack() throws Exception {
    for (String tool : List.of("dpkg-deb", "lintian", "systemd-analyze")) {
      assertThat(onPath(tool)).as("%s is missing: the package checks need Debian's dpkg, lintian and systemd; "
          + "install them with 'apt-get install -y lintian systemd' (scripts/test does)", tool).isTrue();
    }
    assertThat(DEB).exists();
    root = scratch.resolve("root");
    Run r = run(List.of("dpkg-deb", "-x", DEB.toString(), root.toString()));
    assertThat(r.exit).as(r.output).isZero();
  }

  @Test
  void lintianFindsNoError() throws Exception {
    Run r = run(List.of("lintian", "--fail-on", "error", DEB.toString()));
    assertThat(r.exit).as(r.output).isZero();
    assertThat(r.output).doesNotContainPattern("(?m)^E: ");
  }

  @Test
  void filesLieWhereTheDocsSayAndConfigurationIsKeptOnUpgrade() throws Exception {
    assertThat(Files.isExecutable(root.resolve("usr/bin/fcap"))).isTrue();
    assertThat(root.resolve("usr/share/fcap/fcap.jar")).isRegularFile();
    assertThat(root.resolve("usr/share/doc/fcap/copyright")).isRegularFile();
    assertThat(root.resolve("usr/share/doc/fcap/THIRD-PARTY.txt")).isRegularFile();
    assertThat(Files.readString(root.resolve("etc/fcap/fcap.yaml"))).contains("dataDir: /var/lib/fcap")
        .contains("seed: /etc/fcap/rules.yaml");
    Run conffiles = run(List.of("dpkg-deb", "--info", DEB.toString(), "conffiles"));
    assertThat(conffiles.output.lines()).containsExactlyInAnyOrder("/etc/fcap/fcap.yaml", "/etc/fcap/rules.yaml");
  }

  @Test
  void unitIsHardenedAndValid() throws Exception {
    String unit = Files.readString(unit());
    assertThat(unit).contains("User=fcap", "NoNewPrivileges=yes", "ProtectSystem=strict",
        "ReadWritePaths=/var/lib/fcap", "Restart=on-failure", "-XX:+ExitOnOutOfMemoryError",
        "ExecStart=/usr/bin/fcap serve --config /etc/fcap/fcap.yaml");
    // systemd-analyze checks that ExecStart's program exists: point it at the unpacked launcher
    Path copy = Files.createDirectories(scratch.resolve("units")).resolve("fcap.service");
    Files.writeString(copy, unit.replace("/usr/bin/fcap", root.resolve("usr/bin/fcap").toString()));
    Run r = run(List.of("systemd-analyze", "verify", "--man=no", copy.toString()));
    assertThat(r.exit).as(r.output).isZero();
    assertThat(r.output).as("systemd-analyze's complaints").isBlank();
  }

  @Test
  void serverRunsFromTheLauncherAndConfigurationDecidesAndStops() throws Exception {
    Path data = Files.createDirectories(root.resolve("var/lib/fcap"));
    Path stdout = scratch.resolve("stdout.log");
    Path stderr = scratch.resolve("stderr.log");
    ProcessBuilder pb = new ProcessBuilder(root.resolve("usr/bin/fcap").toString(), "serve", "--config",
        root.resolve("etc/fcap/fcap.yaml").toString())
        .directory(data.toFile()).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
    Map<String, String> env = pb.environment();
    env.put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
    env.put("FCAP_JAVA_OPTS", unitJavaOptions() + " -Xmx256m");
    // the packaged configuration names absolute paths; the scratch root stands in for /
    env.put("FCAP_LISTEN", "127.0.0.1:0");
    env.put("FCAP_DATA_DIR", data.toString());
    env.put("FCAP_RULES_SEED", root.resolve("etc/fcap/rules.yaml").toString());
    Process p = pb.start();
    try {
      String base = awaitListening(p, stdout, stderr);
      HttpResponse<String> d = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/v1/decisions"))
          .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"recipient\": \"+15550003\", \"content\": \"hi\"}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(d.statusCode()).as(d.body()).isEqualTo(200);
      assertThat(d.body()).contains("\"allowed\":true");
      assertThat(data.resolve("rules.yaml")).hasSameTextualContentAs(root.resolve("etc/fcap/rules.yaml"));
      assertThat(data.resolve("state")).isDirectory();

      p.destroy(); // SIGTERM, as systemctl stop sends it
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("stopped within TimeoutStopSec").isTrue();
      assertThat(p.exitValue()).as("SuccessExitStatus=143").isEqualTo(143);
      assertThat(Files.readString(stdout)).as("logs on stdout, for journald").contains("shutting down");
    } finally {
      p.destroyForcibly();
    }
  }

  private static String awaitListening(Process p, Path stdout, Path stderr) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      Matcher m = LISTENING.matcher(Files.readString(stdout));
      if (m.find()) {
        return m.group(1);
      }
      if (!p.isAlive()) {
        throw new IllegalStateException("the packaged server exited with " + p.exitValue() + ":\n"
            + Files.readString(stdout) + Files.readString(stderr));
      }
      Thread.sleep(20); // polling the log for the start line, bounded by the deadline
    }
    throw new IllegalStateException("the packaged server did not start within 60 s:\n" + Files.readString(stdout)
        + Files.readString(stderr));
  }

  /** The JVM options of the unit's {@code Environment="FCAP_JAVA_OPTS=..."} line. */
  private static String unitJavaOptions() throws IOException {
    Matcher m = Pattern.compile("(?m)^Environment=\"FCAP_JAVA_OPTS=([^\"]*)\"$").matcher(Files.readString(unit()));
    assertThat(m.find()).as("the unit sets FCAP_JAVA_OPTS").isTrue();
    return m.group(1);
  }

  private static Path unit() {
    return root.resolve("lib/systemd/system/fcap.service");
  }

  static boolean onPath(String tool) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
        return true;
      }
    }
    return false;
  }

  private record Run(int exit, String output) {}

  private static Run run(List<String> cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(new ArrayList<>(cmd)).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(String.join(" ", cmd)).isTrue();
    return new Run(p.exitValue(), out);
  }
}
