package dev.fcap.cli;

import static dev.fcap.cli.CliRun.fcap;
import static dev.fcap.cli.CliRun.fcapTo;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fcap suppress} failures in one line that names the cause, exit code 2: a bad --url, no
 * server, an export that cannot be written, a server message holding control characters. A JDK
 * HTTP server stands in for fcap's, answering with canned replies.
 */
class SuppressCommandTest {
  @TempDir Path dir;
  private HttpServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
  }

  /** A server answering every request with {@code status} and {@code body}; its URL. */
  private String serve(int status, String body) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      exchange.getRequestBody().readAllBytes();
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    });
    server.start();
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private static String exportPage() {
    StringBuilder items = new StringBuilder();
    for (int i = 0; i < 1000; i++) {
      items.append(i == 0 ? "" : ",").append("{\"recipient\":\"+").append(i).append("\",\"reason\":\"")
          .append("x".repeat(100)).append("\"}");
    }
    return "{\"items\":[" + items + "]}";
  }

  @Test
  void aUrlThatIsNoneSaysSo() {
    CliRun notUrl = fcap("suppress", "check", "+1", "--url=notaurl");
    assertThat(notUrl.exit()).isEqualTo(2);
    assertThat(notUrl.err().strip()).isEqualTo("fcap suppress: --url notaurl is not an http:// or https:// URL with a "
        + "host; give one such as http://127.0.0.1:8080");
    CliRun badPort = fcap("suppress", "check", "+1", "--url=http://127.0.0.1:99999");
    assertThat(badPort.exit()).isEqualTo(2);
    assertThat(badPort.err().strip()).isEqualTo("fcap suppress: --url http://127.0.0.1:99999: port 99999 is out of "
        + "range; a port is 1 to 65535");
  }

  @Test
  void noServerSaysTheConnectionWasRefused() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    String url = "http://127.0.0.1:" + port;
    Path csv = dir.resolve("list.csv");
    Files.writeString(csv, "recipient\n+1\n");
    for (String[] args : new String[][] {{"check", "+1"}, {"export"}, {"import", csv.toString()}}) {
      String[] all = new String[args.length + 3];
      all[0] = "suppress";
      System.arraycopy(args, 0, all, 1, args.length);
      all[args.length + 1] = "--url";
      all[args.length + 2] = url;
      CliRun run = fcap(all);
      assertThat(run.exit()).as(args[0]).isEqualTo(2);
      assertThat(run.err().strip()).as(args[0]).isEqualTo("fcap suppress: cannot reach " + url
          + ": connection refused (is the server running, on this URL?)");
    }
  }

  @Test
  void anExportThatCannotBeWrittenFails() throws IOException {
    String url = serve(200, exportPage());
    CliRun file = fcap("suppress", "export", "--url", url, "--out", "/dev/full");
    assertThat(file.exit()).isEqualTo(2);
    assertThat(file.err().strip()).isEqualTo("fcap suppress: cannot write --out /dev/full: No space left on device");
    try (FileOutputStream full = new FileOutputStream("/dev/full")) {
      CliRun stdout = fcapTo(CliOutput.over(full), "suppress", "export", "--url", url);
      assertThat(stdout.exit()).isEqualTo(2);
      assertThat(stdout.err().strip()).isEqualTo("fcap suppress: cannot write the output: No space left on device");
    }
    Path nowhere = dir.resolve("nonexist").resolve("list.ndjson");
    CliRun noDir = fcap("suppress", "export", "--url", url, "--out", nowhere.toString());
    assertThat(noDir.exit()).isEqualTo(2);
    assertThat(noDir.err().strip()).isEqualTo("fcap suppress: cannot write --out " + nowhere
        + ": its directory does not exist");
  }

  @Test
  void controlCharactersTheServerEchoesAreEscaped() throws IOException {
    String url = serve(400, "{\"error\":{\"code\":\"unknown_field\",\"message\":\"unknown column 'a\\u001b[2Jb\\u0007'"
        + " in the header\"}}");
    Path csv = dir.resolve("list.csv");
    Files.writeString(csv, "a\u001b[2Jb\u0007\n+1\n");
    CliRun run = fcap("suppress", "import", "--url", url, csv.toString());
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err().strip()).isEqualTo("fcap suppress: HTTP 400 unknown_field: unknown column "
        + "'a\\u001B[2Jb\\u0007' in the header");
  }
}
