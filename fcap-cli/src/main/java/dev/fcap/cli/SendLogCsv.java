package dev.fcap.cli;

import java.io.IOException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * fcap's CSV reader for send logs (RFC 4180), chosen over the libraries because it takes the
 * least CPU of the four reading the same rows (docs/benchmarks.md, "Replay"), and because it
 * checks what they let through.
 *
 * <p>Records end at LF, CRLF or a lone CR; a field may be quoted, and a quoted field may hold
 * commas, doubled quotes and line breaks (each CRLF or CR inside it is read as LF, so a log gives
 * the same contents whatever its line endings). A leading byte-order mark is skipped. Refused,
 * each with the line its record starts on: a quoted field never closed, text between a closing
 * quote and the next separator ({@code "ab"c}), and a record over {@link #MAX_RECORD_CHARS}
 * characters (a stray quote would otherwise read the rest of the log into memory).
 *
 * <p>How it is fast: the record being read is kept whole in one buffer (refilled and compacted
 * when a record crosses its end, grown up to the record limit), and an unquoted field becomes one
 * {@code String} copied straight from it: no line {@code String}, no per-character appends.
 *
 * <p>Public only for the parser benchmark of fcap-bench, which measures it: it is no API of fcap.
 */
public final class SendLogCsv implements CsvRecords {
  /** The longest record read (characters, its line breaks included): 1 Mi. */
  public static final int MAX_RECORD_CHARS = 1 << 20;
  private static final char BOM = '\uFEFF';

  private final Reader in;
  private char[] buf = new char[1 << 16];
  private int pos;
  private int limit;
  private boolean eof;
  private boolean started;
  /** The line the next record starts on. */
  private long nextLine = 1;
  private long line;
  private final ArrayList<String> fields = new ArrayList<>();
  private final StringBuilder quoted = new StringBuilder();

  public SendLogCsv(Reader in) {
    this.in = in;
  }

  @Override
  public List<String> next() throws IOException {
    if (!started) {
      started = true;
      fill();
      if (pos < limit && buf[pos] == BOM) {
        pos++;
      }
    }
    while (true) {
      if (pos == limit) {
        if (eof) {
          return null;
        }
        fill();
        continue;
      }
      int end = parse();
      if (end >= 0) {
        pos = end;
        return fields;
      }
      if (limit - pos >= MAX_RECORD_CHARS) {
        throw new SendLog.BadRowException(nextLine, "the record is longer than " + MAX_RECORD_CHARS
            + " characters (a quote that is never closed?)");
      }
      fill();
    }
  }

  @Override
  public long line() {
    return line;
  }

  /**
   * Reads the record at {@link #pos} into {@link #fields}: the index just after it, or -1 when the
   * buffer ends inside it (refill and parse again).
   */
  private int parse() {
    fields.clear();
    int i = pos;
    int breaks = 0;
    while (true) {
      if (i < limit && buf[i] == '"') {
        quoted.setLength(0);
        int run = ++i;
        while (true) {
          if (i == limit) {
            if (eof) {
              throw new SendLog.BadRowException(nextLine, "a quoted field is not closed");
            }
            return -1;
          }
          char c = buf[i];
          if (c == '"') {
            if (i + 1 == limit && !eof) {
              return -1; // a doubled quote or the closing one: the next character tells
            }
            quoted.append(buf, run, i - run);
            if (i + 1 < limit && buf[i + 1] == '"') {
              quoted.append('"');
              i += 2;
              run = i;
              continue;
            }
            i++;
            break;
          } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 == limit && !eof) {
              return -1; // CR or CRLF: the next character tells
            }
            quoted.append(buf, run, i - run).append('\n');
            i += c == '\r' && i + 1 < limit && buf[i + 1] == '\n' ? 2 : 1;
            run = i;
            breaks++;
          } else {
            i++;
          }
        }
        fields.add(quoted.toString());
        if (i == limit) {
          if (!eof) {
            return -1;
          }
          return ended(i, breaks);
        }
        char c = buf[i];
        if (c == ',') {
          i++;
          continue;
        }
        if (c != '\n' && c != '\r') {
          throw new SendLog.BadRowException(nextLine, "text after a closing quote ('" + c
              + "'); a quoted field ends at its closing quote, and a quote inside it is doubled (\"\")");
        }
      } else {
        int start = i;
        while (i < limit) {
          char c = buf[i];
          if (c == ',' || c == '\n' || c == '\r') {
            break;
          }
          i++;
        }
        if (i == limit && !eof) {
          return -1;
        }
        fields.add(i == start ? "" : new String(buf, start, i - start));
        if (i == limit) {
          return ended(i, breaks); // the last record has no line break
        }
        if (buf[i] == ',') {
          i++;
          continue;
        }
      }
      // buf[i] ends the record: LF, CRLF or CR
      if (buf[i] == '\r') {
        if (i + 1 == limit && !eof) {
          return -1;
        }
        i += i + 1 < limit && buf[i + 1] == '\n' ? 2 : 1;
      } else {
        i++;
      }
      return ended(i, breaks + 1);
    }
  }

  private int ended(int end, int lines) {
    line = nextLine;
    nextLine += lines;
    return end;
  }

  /** Moves the unread part to the front (growing the buffer if it is full) and reads more. */
  private void fill() throws IOException {
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, limit - pos);
      limit -= pos;
      pos = 0;
    }
    if (limit == buf.length) {
      buf = Arrays.copyOf(buf, buf.length * 2);
    }
    int n = in.read(buf, limit, buf.length - limit);
    if (n < 0) {
      eof = true;
    } else {
      limit += n;
    }
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
