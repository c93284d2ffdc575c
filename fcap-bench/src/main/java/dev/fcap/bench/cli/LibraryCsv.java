package dev.fcap.bench.cli;

import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.csv.CsvFactory;
import com.fasterxml.jackson.dataformat.csv.CsvParser;
import com.univocity.parsers.csv.CsvParserSettings;
import de.siegmar.fastcsv.reader.CloseableIterator;
import de.siegmar.fastcsv.reader.CsvReader;
import de.siegmar.fastcsv.reader.CsvRecord;
import dev.fcap.cli.CsvRecords;
import dev.fcap.cli.SendLogCsv;
import java.io.IOException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The three CSV libraries measured against {@link SendLogCsv}, each behind {@link CsvRecords} so
 * that {@link SendLog} turns their records into the same rows. Each is set up as the replay would
 * need it: every field a string ("" for an empty one, never null), no trimming, the record limit of
 * {@link SendLogCsv#MAX_RECORD_CHARS}, reading on the caller's thread.
 */
final class LibraryCsv {
  private LibraryCsv() {}

  /** FastCSV 3 ({@code de.siegmar:fastcsv}). */
  static CsvRecords fastCsv(Reader in) {
    CloseableIterator<CsvRecord> records = CsvReader.builder().ignoreDifferentFieldCount(true).detectBomHeader(false)
        .skipEmptyLines(false).ofCsvRecord(in).iterator();
    return new CsvRecords() {
      private long line;

      @Override
      public List<String> next() {
        if (!records.hasNext()) {
          return null;
        }
        CsvRecord r = records.next();
        line = r.getStartingLineNumber();
        return r.getFields();
      }

      @Override
      public long line() {
        return line;
      }

      @Override
      public void close() throws IOException {
        records.close();
      }
    };
  }

  /** univocity-parsers 2.9 ({@code com.univocity:univocity-parsers}). */
  static CsvRecords univocity(Reader in) {
    CsvParserSettings settings = new CsvParserSettings();
    settings.getFormat().setLineSeparator("\n");
    settings.setNullValue("");
    settings.setEmptyValue("");
    settings.setIgnoreLeadingWhitespaces(false);
    settings.setIgnoreTrailingWhitespaces(false);
    settings.setSkipEmptyLines(false);
    settings.setMaxCharsPerColumn(SendLogCsv.MAX_RECORD_CHARS);
    settings.setReadInputOnSeparateThread(false); // the replay parses on a thread of its own already
    com.univocity.parsers.csv.CsvParser parser = new com.univocity.parsers.csv.CsvParser(settings);
    parser.beginParsing(in);
    return new CsvRecords() {
      @Override
      public List<String> next() {
        String[] fields = parser.parseNext();
        return fields == null ? null : Arrays.asList(fields);
      }

      @Override
      public long line() {
        return parser.getContext().currentLine();
      }

      @Override
      public void close() {
        parser.stopParsing();
      }
    };
  }

  /** Jackson CSV ({@code jackson-dataformat-csv}), its streaming parser: each record is an array of strings. */
  static CsvRecords jackson(Reader in) throws IOException {
    CsvParser parser = new CsvFactory().createParser(in);
    List<String> fields = new ArrayList<>();
    return new CsvRecords() {
      private long line;

      @Override
      public List<String> next() throws IOException {
        if (parser.nextToken() == null) {
          return null;
        }
        line = parser.currentLocation().getLineNr();
        fields.clear();
        for (JsonToken t = parser.nextToken(); t == JsonToken.VALUE_STRING; t = parser.nextToken()) {
          fields.add(parser.getText());
        }
        return fields;
      }

      @Override
      public long line() {
        return line;
      }

      @Override
      public void close() throws IOException {
        parser.close();
      }
    };
  }
}
