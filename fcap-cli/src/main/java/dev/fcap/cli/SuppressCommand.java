package dev.fcap.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code fcap suppress import|export|check}: a tenant's suppression list on a running server, over
 * its HTTP API (docs/server.md, "Suppression lists"). Exit codes: 0 done (check: suppressed), 1 done
 * with rejected rows (check: not suppressed), 2 a usage or server error, said on stderr.
 */
@Command(name = "suppress", mixinStandardHelpOptions = true,
    description = "Import, export or check a tenant's suppression list on a running server.",
    subcommands = {SuppressCommand.Import.class, SuppressCommand.Export.class, SuppressCommand.Check.class})
final class SuppressCommand {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Where the server is and who asks. */
  static final class Target {
    @Option(names = "--url", defaultValue = "http://127.0.0.1:8080", description = "the server (default ${DEFAULT-VALUE})")
    String url;

    @Option(names = "--api-key", defaultValue = "${env:FCAP_API_KEY}",
        description = "an API key with the suppress (or admin) role (default: $FCAP_API_KEY; none on a server without keys)")
    String apiKey;

    @Option(names = "--tenant", defaultValue = "default", description = "the tenant (default ${DEFAULT-VALUE})")
    String tenant;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10)).build();

    HttpRequest.Builder request(String path, String query) {
      checkUrl();
      String sep = path.contains("?") ? "&" : "?";
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "") + path + sep + "tenant="
          + encode(tenant) + (query == null ? "" : "&" + query)));
      if (apiKey != null && !apiKey.isEmpty()) {
        b.header("Authorization", "Bearer " + apiKey);
      }
      return b;
    }

    /** A --url that is no http(s) URL with a host and a valid port is a usage error. */
    private void checkUrl() {
      URI u;
      try {
        u = new URI(url);
      } catch (java.net.URISyntaxException e) {
        throw new Failed("--url " + url + " is not a URL: " + e.getReason() + "; give one such as http://127.0.0.1:8080");
      }
      if (u.getScheme() == null || !u.getScheme().matches("(?i)https?") || u.getHost() == null) {
        throw new Failed("--url " + url + " is not an http:// or https:// URL with a host; give one such as "
            + "http://127.0.0.1:8080");
      }
      if (u.getPort() == 0 || u.getPort() > 65535) {
        throw new Failed("--url " + url + ": port " + u.getPort() + " is out of range; a port is 1 to 65535");
      }
    }

    /** Sends; a reply that is not 2xx or 404 is a {@link Failed} with the server's error message. */
    JsonNode send(HttpRequest request) {
      HttpResponse<String> r;
      try {
        r = http.send(request, HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        throw new Failed("cannot reach " + url + ": " + reason(e));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new Failed("interrupted");
      }
      JsonNode body;
      try {
        body = JSON.readTree(r.body());
      } catch (IOException e) {
        throw new Failed("HTTP " + r.statusCode() + " from " + url + ", not JSON: " + r.body());
      }
      if (r.statusCode() / 100 != 2 && r.statusCode() != 404) {
        JsonNode error = body.path("error");
        throw new Failed("HTTP " + r.statusCode() + " " + error.path("code").asText() + ": "
            + error.path("message").asText() + (error.hasNonNull("field") ? " (field " + error.get("field").asText()
            + ")" : ""));
      }
      return r.statusCode() == 404 ? null : body;
    }
  }

  /** A failure to report on stderr, exit code 2. */
  static final class Failed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Failed(String message) {
      super(message);
    }
  }

  /** Why a request failed: a refused connection says so (its exception has no message). */
  static String reason(IOException e) {
    if (e instanceof java.net.http.HttpConnectTimeoutException) {
      return "timed out connecting";
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null && !t.getMessage().isBlank()) {
        return t.getMessage();
      }
      if (t instanceof java.net.ConnectException) {
        return "connection refused (is the server running, on this URL?)";
      }
    }
    return e.getClass().getSimpleName();
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private static int failed(CommandSpec spec, Failed e) {
    spec.commandLine().getErr().println("fcap suppress: " + Printable.escape(e.getMessage()));
    return 2;
  }

  @Command(name = "import", mixinStandardHelpOptions = true,
      description = {"Add or replace the entries of a CSV or NDJSON file (streamed to the server).",
          "CSV: a header line naming the columns (recipient; channels, categories with values separated by |; "
              + "reason; expiresAt), then a row per line. NDJSON: an object per line.",
          "Each bad row is printed with its line and skipped; the exit code is 1 if any was."})
  static final class Import implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    Target target;

    @Parameters(paramLabel = "FILE", description = "the file (.csv, .ndjson or .jsonl)")
    Path file;

    @Option(names = "--format", description = "csv or ndjson (default: from the file's extension)")
    String format;

    @Override
    public Integer call() {
      try {
        String type = type();
        if (!Files.isReadable(file)) {
          throw new Failed("cannot read " + file);
        }
        HttpRequest request = target.request("/v1/suppressions/import", null).header("Content-Type", type)
            .timeout(Duration.ofMinutes(30)).POST(HttpRequest.BodyPublishers.ofFile(file)).build();
        JsonNode r = target.send(request);
        PrintWriter out = spec.commandLine().getOut();
        for (JsonNode e : r.path("errors")) {
          out.println(Printable.escape("line " + e.path("line").asLong() + ": " + e.path("code").asText() + ": "
              + e.path("message").asText() + (e.hasNonNull("field") ? " (field " + e.get("field").asText() + ")" : "")));
        }
        if (r.has("errorsOmitted")) {
          out.println("... and " + r.get("errorsOmitted").asLong() + " more bad rows");
        }
        out.println("applied " + r.path("applied").asLong() + ", rejected " + r.path("rejected").asLong());
        return r.path("rejected").asLong() == 0 ? 0 : 1;
      } catch (Failed e) {
        return failed(spec, e);
      } catch (IOException e) {
        return failed(spec, new Failed("cannot read " + file + ": " + e.getMessage()));
      }
    }

    private String type() {
      String f = format != null ? format : file.getFileName().toString().endsWith(".csv") ? "csv"
          : file.getFileName().toString().matches(".*\\.(ndjson|jsonl)$") ? "ndjson" : null;
      if (f == null) {
        throw new Failed("cannot tell the format of " + file + " from its name: give --format csv or --format ndjson");
      }
      return switch (f) {
        case "csv" -> "text/csv";
        case "ndjson" -> "application/x-ndjson";
        default -> throw new Failed("--format must be csv or ndjson (got " + f + ")");
      };
    }
  }

  @Command(name = "export", mixinStandardHelpOptions = true,
      description = "Write the tenant's list as NDJSON, an entry per line, in the list's order.")
  static final class Export implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    Target target;

    @Option(names = "--out", description = "the file to write (default: standard output)")
    Path out;

    @Override
    public Integer call() {
      OutputStream file;
      try {
        file = out == null ? null : Files.newOutputStream(out);
      } catch (IOException e) {
        return failed(spec, new Failed("cannot write --out " + out + ": " + CliOutput.reason(e)));
      }
      try (file) {
        PrintWriter w = file == null ? spec.commandLine().getOut() : CliOutput.over(file, StandardCharsets.UTF_8);
        long n = 0;
        String cursor = null;
        do {
          JsonNode page = target.send(target.request("/v1/suppressions", "limit=1000"
              + (cursor == null ? "" : "&cursor=" + encode(cursor))).GET().build());
          for (JsonNode e : page.path("items")) {
            w.println(JSON.writeValueAsString(e));
            n++;
          }
          cursor = page.hasNonNull("nextCursor") ? page.get("nextCursor").asText() : null;
        } while (cursor != null);
        CliOutput.check(w, out == null ? "the output" : "--out " + out);
        spec.commandLine().getErr().println("exported " + n + " entries");
        return 0;
      } catch (Failed e) {
        return failed(spec, e);
      } catch (CliException e) {
        return failed(spec, new Failed(e.getMessage())); // exit code 2, as every failure of suppress
      } catch (IOException e) {
        return failed(spec, new Failed("cannot write --out " + out + ": " + CliOutput.reason(e)));
      }
    }
  }

  @Command(name = "check", mixinStandardHelpOptions = true,
      description = "Say whether a recipient is suppressed, and how; exit code 0 if it is, 1 if not.")
  static final class Check implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    Target target;

    @Parameters(paramLabel = "RECIPIENT")
    String recipient;

    @Override
    public Integer call() {
      try {
        JsonNode e = target.send(target.request("/v1/suppressions/" + encode(recipient), null).GET().build());
        PrintWriter out = spec.commandLine().getOut();
        if (e == null) {
          out.println(recipient + ": not suppressed");
          return 1;
        }
        out.println(recipient + ": suppressed on " + scope(e.path("channels"), "every channel") + ", "
            + scope(e.path("categories"), "every category") + (e.path("expiresAt").asLong() < 0 ? ", no expiry"
            : ", until " + java.time.Instant.ofEpochMilli(e.path("expiresAt").asLong())) + "; reason: "
            + e.path("reason").asText() + "; added by " + e.path("addedBy").asText() + " at "
            + java.time.Instant.ofEpochMilli(e.path("addedAt").asLong()));
        return 0;
      } catch (Failed e) {
        return failed(spec, e);
      }
    }

    private static String scope(JsonNode values, String all) {
      if (values.isEmpty()) {
        return all;
      }
      StringBuilder b = new StringBuilder();
      values.forEach(v -> b.append(b.length() == 0 ? "" : "|").append(v.asText()));
      return b.toString();
    }
  }
}
