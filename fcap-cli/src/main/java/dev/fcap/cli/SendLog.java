package dev.fcap.cli;

import dev.fcap.model.Defer;
import dev.fcap.model.InvalidMessageException;
import dev.fcap.model.Message;
import dev.fcap.model.Priority;
import java.io.IOException;
import java.io.Reader;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a send log, one row at a time: CSV with a header naming the columns {@code timestamp}
 * (epoch milliseconds or ISO-8601) and {@code recipient}, and optionally {@code tenant},
 * {@code channel}, {@code sender}, {@code category}, {@code content}, {@code contentKey},
 * {@code cost}, {@code messageId} (a row whose messageId was decided before is answered with that
 * decision and counted once, as the server does), {@code timeZone} (the recipient's, an IANA id such
 * as {@code America/New_York}; empty: the policy's zone, else UTC), {@code priority}
 * ({@code critical}, {@code high}, {@code normal} or {@code low}; empty: normal), {@code override}
 * ({@code true} or {@code false}; empty: false), {@code defer} ({@code true} or {@code false}; empty:
 * false: a refused row is booked for the earliest instant every rule admits it), {@code notAfter}
 * (the latest instant to book at, epoch milliseconds or ISO-8601; empty: the policy's longest window;
 * only with {@code defer} true) and {@code attr:NAME}. The CSV itself is read by
 * {@link SendLogCsv} (RFC 4180: quoted fields with commas, quotes and line breaks; lines ending in
 * LF, CRLF or CR; a leading byte-order mark skipped); this class turns records into rows. A bad row
 * stops the replay with its line number (the line its record starts on). Streams: memory does not
 * grow with the log.
 *
 * <p>Public, with the parts of it that take other CSV parsers, only for the parser benchmark of
 * fcap-bench ({@code dev.fcap.bench.cli}): it is no API of fcap.
 */
public final class SendLog implements AutoCloseable {
  /**
   * The optional columns, in the order {@link #next} reads them, as {@code fcap replay --help} lists
   * them (a constant, for its annotation).
   */
  static final String OPTIONAL_COLUMNS = "tenant, channel, sender, category, content, contentKey, cost, messageId, "
      + "timeZone, priority, override, defer, notAfter";
  /** The columns a header may name (besides attr:NAME): timestamp and recipient, then the optional ones. */
  static final List<String> KNOWN = List.of(("timestamp, recipient, " + OPTIONAL_COLUMNS).split(", "));

  /** A row that cannot be replayed; the message names the line and the reason. */
  public static final class BadRowException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BadRowException(long line, String reason) {
      super("line " + line + ": " + reason);
    }
  }

  /** One row: when, and what was sent. */
  public record Row(long line, long time, Message message) {}

  private final CsvRecords in;
  private final int timestamp;
  private final int recipient;
  private final int[] column = new int[KNOWN.size()];
  private final Map<String, Integer> attributes = new HashMap<>();
  /** The zones of this log by id: a log names few, and each is looked up once. */
  private final Map<String, ZoneId> zones = new HashMap<>();
  private final int width;
  private List<String> fields;
  private long line;

  /** A send log read by fcap's own CSV reader ({@link SendLogCsv}). */
  SendLog(Reader in) throws IOException {
    this(new SendLogCsv(in));
  }

  /** A send log read by {@code records} (the parser benchmark compares CSV libraries here). */
  public SendLog(CsvRecords records) throws IOException {
    this.in = records;
    if (!readRecord()) {
      throw new BadRowException(1, "the log is empty; expected a header such as timestamp,recipient,content");
    }
    java.util.Arrays.fill(column, -1);
    for (int i = 0; i < fields.size(); i++) {
      String name = fields.get(i).trim();
      int known = KNOWN.indexOf(name);
      if (known >= 0) {
        if (column[known] >= 0) {
          throw new BadRowException(line, "column '" + name + "' appears twice in the header");
        }
        column[known] = i;
      } else if (name.startsWith("attr:") && name.length() > 5) {
        attributes.put(name.substring(5), i);
      } else {
        throw new BadRowException(line, "unknown column '" + name + "'; known columns: " + String.join(", ", KNOWN)
            + ", attr:NAME");
      }
    }
    timestamp = column[0];
    recipient = column[1];
    if (timestamp < 0 || recipient < 0) {
      throw new BadRowException(line, "the header must name the columns timestamp and recipient");
    }
    width = fields.size();
  }

  /** The next row, or null at the end of the log. */
  public Row next() throws IOException {
    do {
      if (!readRecord()) {
        return null;
      }
    } while (fields.size() == 1 && fields.get(0).isEmpty()); // blank lines
    if (fields.size() != width) {
      throw new BadRowException(line, "expected " + width + " fields, found " + fields.size());
    }
    long time = parseTime(fields.get(timestamp));
    try {
      Message.Builder b = Message.builder(fields.get(recipient))
          .tenant(optional(2))
          .channel(optional(3))
          .sender(optional(4))
          .category(optional(5))
          .content(optional(6))
          .contentKey(optional(7))
          .cost(parseCost(optional(8)))
          .messageId(optional(9))
          .timeZone(zone(optional(10)))
          .priority(priority(optional(11)))
          .override(bool(optional(12), "override"))
          .defer(defer(bool(optional(13), "defer"), optional(14)));
      if (!attributes.isEmpty()) {
        Map<String, String> attrs = new HashMap<>();
        attributes.forEach((name, i) -> {
          if (!fields.get(i).isEmpty()) {
            attrs.put(name, fields.get(i));
          }
        });
        b.attributes(attrs);
      }
      return new Row(line, time, b.build());
    } catch (InvalidMessageException e) {
      throw new BadRowException(line, e.getMessage() + " (column " + e.field() + ")");
    }
  }

  private String optional(int known) {
    int i = column[known];
    return i < 0 || fields.get(i).isEmpty() ? null : fields.get(i);
  }

  private boolean bool(String value, String column) {
    if (value == null || value.equals("false")) {
      return false;
    }
    if (value.equals("true")) {
      return true;
    }
    throw new BadRowException(line, column + " '" + value + "' is neither true nor false (column " + column + ")");
  }

  private Defer defer(boolean defer, String notAfter) {
    if (!defer) {
      if (notAfter != null) {
        throw new BadRowException(line, "notAfter is given but defer is not true; set defer to true, or leave "
            + "notAfter empty (column notAfter)");
      }
      return null;
    }
    return notAfter == null ? Defer.BY_DEFAULT : new Defer(parseTime(notAfter, "notAfter"));
  }

  private Priority priority(String id) {
    if (id == null) {
      return null;
    }
    return Priority.fromId(id.trim()).orElseThrow(() -> new BadRowException(line, "priority '" + id
        + "' is not a priority; use one of " + Priority.ids() + " (column priority)"));
  }

  private ZoneId zone(String id) {
    if (id == null) {
      return null;
    }
    ZoneId zone = zones.get(id);
    if (zone == null) {
      try {
        zone = ZoneId.of(id.trim());
      } catch (DateTimeException e) {
        throw new BadRowException(line, "timeZone '" + id + "' is not a time zone; use an IANA id such as "
            + "America/New_York or Asia/Kolkata (column timeZone)");
      }
      zones.put(id, zone);
    }
    return zone;
  }

  private long parseCost(String text) {
    if (text == null) {
      return 1;
    }
    try {
      return Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new BadRowException(line, "cost '" + text + "' is not a whole number");
    }
  }

  private long parseTime(String text) {
    return parseTime(text, "timestamp");
  }

  private long parseTime(String text, String column) {
    String t = text.trim();
    if (isEpochMillis(t)) {
      return Long.parseLong(t);
    }
    try {
      return Instant.parse(t).toEpochMilli();
    } catch (DateTimeParseException e) {
      try {
        return OffsetDateTime.parse(t).toInstant().toEpochMilli();
      } catch (DateTimeParseException e2) {
        throw new BadRowException(line, column + " '" + text
            + "' is neither epoch milliseconds nor ISO-8601 (e.g. 2026-11-21T08:00:00Z)");
      }
    }
  }

  private static boolean isEpochMillis(String t) {
    if (t.isEmpty() || t.length() > 15) {
      return false;
    }
    for (int i = 0; i < t.length(); i++) {
      if (t.charAt(i) < '0' || t.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }


  private boolean readRecord() throws IOException {
    fields = in.next();
    line = in.line();
    return fields != null;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
