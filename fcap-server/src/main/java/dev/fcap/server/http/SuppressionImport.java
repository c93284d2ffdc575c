package dev.fcap.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.fcap.server.auth.Authenticator;
import dev.fcap.server.auth.Principal;
import dev.fcap.server.decision.SuppressionService;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.guard.Messages;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@code POST /v1/suppressions/import}: a tenant's suppression entries from a CSV
 * ({@code text/csv}) or NDJSON ({@code application/x-ndjson}) body of up to {@link #MAX_ROWS} rows,
 * read as it arrives (never held whole) on a blocking thread, a line at a time: each bad row is
 * reported with its line number, code, message and field, and skipped; the good rows are written in
 * batches. The answer, once the body has been read: {@code {"applied", "rejected", "errors": [...]}}
 * (the first {@link #MAX_REPORTED} errors; {@code errorsOmitted} counts the rest).
 *
 * <p>This is the one route whose body is neither JSON nor bounded by {@code limits.maxBodyBytes}:
 * {@link RequestGuard} checks its Host, Origin and key on the headers as for every route and passes
 * the body on unread. Its content types are not ones a web page can send without a preflight.
 *
 * <p>CSV: a header line naming the columns ({@code recipient} required; {@code channels},
 * {@code categories} with values separated by {@code |}, {@code reason}, {@code expiresAt} optional,
 * in any order), then a row per line, RFC 4180 quoting within a line. NDJSON: one object per line
 * with the fields of {@code PUT /v1/suppressions/{recipient}} plus {@code recipient}. Blank lines are
 * skipped.
 */
final class SuppressionImport implements HttpService {
  static final String PATH = "/v1/suppressions/import";
  static final int MAX_ROWS = 10_000_000;
  static final int MAX_REPORTED = 1_000;
  /** The longest line read; a longer one is a bad row (its rest is skipped). */
  static final int MAX_LINE = 16 * 1024;
  /** How long one import may take to arrive and be written. */
  static final Duration TIMEOUT = Duration.ofMinutes(30);
  private static final MediaType CSV = MediaType.parse("text/csv");
  private static final MediaType NDJSON = MediaType.parse("application/x-ndjson");
  /** One line as its cells (a document without a schema: its first row, as an array). */
  private static final ObjectReader CSV_ROW = new CsvMapper().readerFor(String[].class);
  private static final List<String> COLUMNS = List.of("recipient", "channels", "categories", "reason", "expiresAt");

  private final SuppressionService suppressions;
  private final Authenticator auth;

  SuppressionImport(SuppressionService suppressions, Authenticator auth) {
    this.suppressions = suppressions;
    this.auth = auth;
  }

  /** Whether a request is an import, whose body {@link RequestGuard} leaves unread. */
  static boolean streams(String path, HttpMethod method) {
    return method == HttpMethod.POST && PATH.equals(path);
  }

  @Override
  public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
    try {
      Principal who = auth.authenticate(req.headers().get(HttpHeaderNames.AUTHORIZATION), req.headers().get("x-api-key"));
      String tenant = Messages.tenant(ctx.queryParam("tenant"));
      SuppressionService.Import rows = suppressions.startImport(who, tenant);
      MediaType type = req.headers().contentType();
      boolean csv = type != null && type.is(CSV);
      if (!csv && (type == null || !type.is(NDJSON))) {
        throw new ApiException(415, "unsupported_media_type", "an import is CSV or NDJSON: send 'Content-Type: "
            + "text/csv' or 'application/x-ndjson' (got " + type + ")", "Content-Type");
      }
      InputStream body = req.toInputStream(o -> o instanceof HttpData d ? d : HttpData.empty());
      return HttpResponse.of(CompletableFuture.supplyAsync(() -> read(body, csv, rows), ctx.blockingTaskExecutor())
          .exceptionally(HttpApi::failure));
    } catch (ApiException e) {
      req.abort();
      return Json.error(e);
    }
  }

  /** One reported bad row. */
  private record RowError(long line, ApiException error) {}

  private HttpResponse read(InputStream body, boolean csv, SuppressionService.Import rows) {
    List<RowError> errors = new ArrayList<>();
    long omitted = 0;
    try (body) {
      LineReader lines = new LineReader(body);
      String[] header = null;
      long rowsRead = 0;
      for (String line; (line = lines.next()) != null; ) {
        long at = lines.number();
        if (line.isBlank()) {
          continue;
        }
        try {
          if (lines.truncated()) {
            throw ApiException.badRequest("too_long", "the line is longer than " + MAX_LINE + " bytes", null);
          }
          if (csv && header == null) {
            header = header(line);
            continue;
          }
          if (++rowsRead > MAX_ROWS) {
            throw ApiException.badRequest("too_many_rows", "an import holds at most " + MAX_ROWS
                + " rows; send the rest in another", null);
          }
          if (csv) {
            csvRow(line, header, rows);
          } else {
            jsonRow(line, rows);
          }
        } catch (ApiException e) {
          rows.rejected();
          if (errors.size() < MAX_REPORTED) {
            errors.add(new RowError(at, e));
          } else {
            omitted++;
          }
          if (csv && header == null) {
            break; // without its header no row can be read
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      rows.finish(); // the good rows read so far are applied, and audited, whatever stopped the body
    }
    long skipped = omitted;
    return Json.ok(g -> {
      g.writeStartObject();
      g.writeNumberField("applied", rows.applied());
      g.writeNumberField("rejected", rows.rejectedRows());
      g.writeArrayFieldStart("errors");
      for (RowError e : errors) {
        g.writeStartObject();
        g.writeNumberField("line", e.line());
        g.writeStringField("code", e.error().code());
        g.writeStringField("message", e.error().getMessage());
        if (e.error().field() != null) {
          g.writeStringField("field", e.error().field());
        }
        g.writeEndObject();
      }
      g.writeEndArray();
      if (skipped > 0) {
        g.writeNumberField("errorsOmitted", skipped);
      }
      g.writeEndObject();
    });
  }

  private static String[] header(String line) {
    String[] names = cells(line);
    for (String n : names) {
      if (!COLUMNS.contains(n)) {
        throw ApiException.badRequest("unknown_field", "unknown column '" + n + "' in the header; known: "
            + String.join(", ", COLUMNS), n);
      }
    }
    if (!Arrays.asList(names).contains("recipient")) {
      throw ApiException.badRequest("missing_field", "the header line must name a recipient column", "recipient");
    }
    return names;
  }

  private static void csvRow(String line, String[] header, SuppressionService.Import rows) {
    String[] cells = cells(line);
    if (cells.length != header.length) {
      throw ApiException.badRequest("invalid_row", "the row has " + cells.length + " cells, the header "
          + header.length, null);
    }
    String recipient = null;
    List<String> channels = List.of();
    List<String> categories = List.of();
    String reason = null;
    long expiresAt = -1;
    for (int i = 0; i < header.length; i++) {
      String v = cells[i];
      switch (header[i]) {
        case "recipient" -> recipient = v;
        case "channels" -> channels = values(v);
        case "categories" -> categories = values(v);
        case "reason" -> reason = v;
        default -> expiresAt = expiry(v);
      }
    }
    rows.add(recipient, channels, categories, reason, expiresAt);
  }

  private static void jsonRow(String line, SuppressionService.Import rows) {
    JsonNode row;
    try {
      row = Json.MAPPER.readTree(line);
    } catch (IOException e) {
      throw ApiException.badRequest("invalid_json", "the line is not a JSON object", null);
    }
    if (row == null || !row.isObject()) {
      throw ApiException.badRequest("invalid_type", "each line must be a JSON object", null);
    }
    row.fieldNames().forEachRemaining(f -> {
      if (!COLUMNS.contains(f)) {
        throw ApiException.badRequest("unknown_field", "unknown field '" + f + "'; known fields: "
            + String.join(", ", COLUMNS), f);
      }
    });
    JsonNode recipient = row.path("recipient");
    if (!recipient.isTextual()) {
      throw ApiException.badRequest(recipient.isMissingNode() ? "missing_field" : "invalid_type",
          "recipient must be a string", "recipient");
    }
    JsonNode reason = row.path("reason");
    if (!reason.isMissingNode() && !reason.isNull() && !reason.isTextual()) {
      throw ApiException.badRequest("invalid_type", "reason must be a string", "reason");
    }
    JsonNode expires = row.path("expiresAt");
    if (!expires.isMissingNode() && !expires.isNull() && !expires.canConvertToExactIntegral()) {
      throw ApiException.badRequest("invalid_type", "expiresAt must be epoch milliseconds, or -1 for never", "expiresAt");
    }
    rows.add(recipient.asText(), HttpApi.strings(row, "channels"), HttpApi.strings(row, "categories"),
        reason.isTextual() ? reason.asText() : null, expires.isMissingNode() || expires.isNull() ? -1 : expires.asLong());
  }

  private static String[] cells(String line) {
    try {
      return CSV_ROW.readValue(line);
    } catch (com.fasterxml.jackson.core.JacksonException e) {
      throw ApiException.badRequest("invalid_csv", "the line is not a CSV row: " + e.getOriginalMessage(), null);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a string is read: never
    }
  }

  /** A CSV cell of values separated by {@code |}; empty: none (every one). */
  private static List<String> values(String cell) {
    return cell.isEmpty() ? List.of() : List.of(cell.split("\\|", -1));
  }

  private static long expiry(String cell) {
    if (cell.isEmpty()) {
      return -1;
    }
    try {
      return Long.parseLong(cell);
    } catch (NumberFormatException e) {
      throw ApiException.badRequest("invalid_type", "expiresAt must be epoch milliseconds, or -1 for never", "expiresAt");
    }
  }

  /**
   * UTF-8 lines of a stream ({@code \n} or {@code \r\n}), numbered from 1, each at most
   * {@link #MAX_LINE} bytes (the rest of a longer one is skipped, and it is marked truncated), read
   * through one buffer: a body of millions of lines is never held.
   */
  private static final class LineReader {
    private final InputStream in;
    private final byte[] buffer = new byte[1 << 16];
    private final byte[] line = new byte[MAX_LINE];
    private int pos;
    private int end;
    private long number;
    private boolean truncated;

    LineReader(InputStream in) {
      this.in = in;
    }

    long number() {
      return number;
    }

    boolean truncated() {
      return truncated;
    }

    /** The next line, or null at the end. */
    String next() throws IOException {
      int length = 0;
      truncated = false;
      boolean any = false;
      while (true) {
        if (pos == end) {
          end = in.read(buffer, 0, buffer.length);
          pos = 0;
          if (end <= 0) {
            end = 0;
            if (!any) {
              return null;
            }
            break;
          }
        }
        any = true;
        byte b = buffer[pos++];
        if (b == '\n') {
          break;
        }
        if (length < MAX_LINE) {
          line[length++] = b;
        } else {
          truncated = true;
        }
      }
      number++;
      if (length > 0 && line[length - 1] == '\r') {
        length--;
      }
      return new String(line, 0, length, StandardCharsets.UTF_8);
    }
  }
}
