package dev.fcap.bench.cli;

import dev.fcap.cli.CsvRecords;
import dev.fcap.cli.SendLog;
import dev.fcap.cli.SendLogCsv;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.List;

/**
 * The baseline of {@link ReplayParseBenchmark}: a plain CSV reader (one
 * {@code readLine} per line, one {@code StringBuilder} append per character), kept here only to
 * measure what {@link SendLogCsv} gains over it. It does not check what SendLogCsv checks (byte-order mark,
 * text after a closing quote, record length).
 */
final class ReadLineCsv implements CsvRecords {
  private final BufferedReader in;
  private final List<String> fields = new ArrayList<>();
  private final StringBuilder field = new StringBuilder();
  private long line;
  private long start;

  ReadLineCsv(Reader in) {
    this.in = new BufferedReader(in, 1 << 16);
  }

  @Override
  public List<String> next() throws IOException {
    String text = in.readLine();
    if (text == null) {
      return null;
    }
    start = ++line;
    fields.clear();
    field.setLength(0);
    boolean quoted = false;
    int i = 0;
    while (true) {
      if (i == text.length()) {
        if (!quoted) {
          break;
        }
        text = in.readLine();
        if (text == null) {
          throw new SendLog.BadRowException(start, "a quoted field is not closed");
        }
        line++;
        field.append('\n');
        i = 0;
        continue;
      }
      char c = text.charAt(i++);
      if (quoted) {
        if (c == '"') {
          if (i < text.length() && text.charAt(i) == '"') {
            field.append('"');
            i++;
          } else {
            quoted = false;
          }
        } else {
          field.append(c);
        }
      } else if (c == ',') {
        fields.add(field.toString());
        field.setLength(0);
      } else if (c == '"' && field.length() == 0) {
        quoted = true;
      } else {
        field.append(c);
      }
    }
    fields.add(field.toString());
    return fields;
  }

  @Override
  public long line() {
    return start;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
