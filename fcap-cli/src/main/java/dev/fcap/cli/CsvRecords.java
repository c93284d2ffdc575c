package dev.fcap.cli;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;

/**
 * A CSV parser as {@link SendLog} needs it: one record at a time, as its fields, and the line it
 * started on (for error messages). A record it cannot read (a quote never closed, a record over the
 * size limit) is a {@link SendLog.BadRowException} naming that line. Public only for the parser
 * benchmark of fcap-bench, which reads through other parsers: it is no API of fcap.
 */
public interface CsvRecords extends Closeable {
  /** The fields of the next record (valid until the next call), or null at the end of input. */
  List<String> next() throws IOException;

  /** The line (from 1) the record last returned by {@link #next()} started on. */
  long line();
}
