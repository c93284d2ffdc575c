package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fcap.jar} with a small heap: a store the heap cannot hold stops the start, with the numbers. */
class HeapLimitsIT {
  @TempDir
  Path tmp;

  @Test
  void aStoreTheHeapCannotHoldIsRefusedBeforeAnythingIsWritten() throws Exception {
    Path jar = Path.of(System.getProperty("user.dir"), "target", "fcap.jar");
    assertThat(jar).as("the shaded jar (the package phase makes it)").isRegularFile();
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx64m", "-XX:+ExitOnOutOfMemoryError", "-jar", jar.toString(), "serve", "--listen", "127.0.0.1:0")
        .directory(tmp.toFile()).redirectErrorStream(true);
    pb.environment().put("FCAP_STORE_MAX_BYTES", "1GB");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isEqualTo(2);
    assertThat(out).contains("store.maxBytes: 1024 MiB does not fit the heap").containsPattern("at most 70% of it, \\d+ MiB of \\d+ MiB");
    try (var files = Files.list(tmp)) {
      assertThat(files.toList()).as("nothing written").isEqualTo(List.of());
    }
  }
}
