package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Configuration that cannot be mistyped: a misspelled environment variable, a port in use and a
 * path that cannot be written each stop the start with what is wrong and what to change, and a
 * refused start writes nothing.
 */
class StartMistakesTest {
  @TempDir
  Path tmp;

  @Test
  void aMisspelledVariableIsRefusedNamingTheClosestSetting() {
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("FCAP_STORE_MAXBYTES", "1GB"), Map.of()))
        .isInstanceOf(ConfigLoader.ConfigException.class)
        .hasMessageContaining("FCAP_STORE_MAXBYTES").hasMessageContaining("did you mean FCAP_STORE_MAX_BYTES");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("FCAP_LISTNE", "127.0.0.1:1"), Map.of()))
        .hasMessageContaining("did you mean FCAP_LISTEN");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("FCAP_AUDIT_SAMPLE_ADMISSION", "0.1"), Map.of()))
        .hasMessageContaining("did you mean FCAP_AUDIT_SAMPLE_ADMISSIONS");
  }

  @Test
  void theLaunchersAndClientsOwnVariablesAreNotSettingsAndPass() {
    Map<String, String> env = Map.of("FCAP_JAVA_OPTS", "-Xmx1g", "FCAP_CONFIG", "x.yaml", "FCAP_API_KEY", "k",
        "FCAP_LISTEN", "127.0.0.1:9", "PATH", "/bin");
    assertThat(ConfigLoader.load(null, env, Map.of()).listenPort()).isEqualTo(9);
  }

  @Test
  void aPortInUseNamesThePortAndTheSettingAndWritesNothing() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      Path data = tmp.resolve("data");
      Map<String, String> settings = settings(data);
      settings.put("listen", "127.0.0.1:" + taken.getLocalPort());
      assertThatThrownBy(() -> FcapServer.start(ConfigLoader.load(null, Map.of(), settings)))
          .hasMessageContaining("127.0.0.1:" + taken.getLocalPort()).hasMessageContaining("listen")
          .hasMessageContaining("in use");
      assertThat(data).doesNotExist();
    }
  }

  @Test
  void aStoreDirThatIsAFileSaysSo() throws Exception {
    Path file = Files.writeString(tmp.resolve("file"), "x");
    Map<String, String> settings = settings(tmp.resolve("data"));
    settings.put("store.dir", file.toString());
    assertThatThrownBy(() -> FcapServer.start(ConfigLoader.load(null, Map.of(), settings)))
        .hasMessageContaining(file.toString()).hasMessageContaining("not a directory").hasMessageContaining("store.dir");
    settings.put("store.dir", file.resolve("state").toString());
    assertThatThrownBy(() -> FcapServer.start(ConfigLoader.load(null, Map.of(), settings)))
        .hasMessageContaining("not a directory").hasMessageContaining("store.dir");
  }

  @Test
  void anAuditOrRulesPathUnderAFileSaysSo() throws Exception {
    Path file = Files.writeString(tmp.resolve("file"), "x");
    Map<String, String> settings = settings(tmp.resolve("data"));
    settings.put("audit.sink", "file:" + file.resolve("audit.jsonl"));
    assertThatThrownBy(() -> FcapServer.start(ConfigLoader.load(null, Map.of(), settings)))
        .hasMessageContaining("not a directory").hasMessageContaining("audit.sink");
    Map<String, String> rules = settings(tmp.resolve("data"));
    rules.put("rules.source", file.resolve("rules.yaml").toString());
    rules.put("store.dir", tmp.resolve("state").toString());
    assertThatThrownBy(() -> FcapServer.start(ConfigLoader.load(null, Map.of(), rules)))
        .hasMessageContaining("not a directory").hasMessageContaining("rules.source");
  }

  @Test
  void aReadOnlyFileSystemSaysSo() throws Exception {
    Path readOnly = Path.of("/proc/fcap-state");
    Map<String, String> settings = settings(tmp.resolve("data"));
    settings.put("store.dir", readOnly.toString());
    assertThatThrownBy(() -> FcapServer.start(ConfigLoader.load(null, Map.of(), settings)))
        .hasMessageContaining("store.dir").hasMessageContaining(readOnly.toString())
        .satisfies(e -> assertThat(e.getMessage()).containsAnyOf("permission denied", "read-only", "does not exist"));
  }

  /** The reasons a file system gives, as the operator reads them (a full disk cannot be made here without root). */
  @Test
  void fileSystemReasonsAreWordedForTheOperator() {
    Path dir = tmp.resolve("state");
    assertThat(StartChecks.pathFailed("store.dir", dir, dir,
        new java.io.UncheckedIOException(new java.nio.file.FileSystemException(dir + "/journal", null,
            "No space left on device"))).getMessage())
        .isEqualTo("store.dir: cannot use " + dir + ": disk full (no space left on device)");
    assertThat(StartChecks.pathFailed("audit.sink", dir.resolve("a.jsonl"), dir,
        new java.nio.file.AccessDeniedException(dir.toString())).getMessage()).contains("permission denied");
    assertThat(StartChecks.pathFailed("store.dir", dir, dir,
        new java.nio.file.FileSystemException(dir.toString(), null, "Read-only file system")).getMessage())
        .contains("read-only file system");
  }

  private static Map<String, String> settings(Path data) {
    Map<String, String> s = new HashMap<>();
    s.put("listen", "127.0.0.1:0");
    s.put("rules.source", data.resolve("rules.yaml").toString());
    s.put("audit.sink", "file:" + data.resolve("audit.jsonl"));
    s.put("shutdown.grace", "1s");
    return s;
  }
}
