package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SendLogCsvTest {

  /** Every record of {@code csv}, each as its start line and fields, read {@code chunk} characters at a time. */
  private static List<String> read(String csv, int chunk) throws IOException {
    List<String> out = new ArrayList<>();
    try (SendLogCsv in = new SendLogCsv(new Chunked(csv, chunk))) {
      for (List<String> r = in.next(); r != null; r = in.next()) {
        out.add(in.line() + ":" + r);
      }
    }
    return out;
  }

  @Test
  void quotedFieldsHoldSeparatorsDoubledQuotesAndLineBreaks() throws IOException {
    String csv = "a,\"b,c\",\"say \"\"hi\"\"\",\"two\nlines\"\n\"\",x\n";
    for (int chunk : new int[] {1, 2, 3, 1 << 16}) {
      assertThat(read(csv, chunk)).as("read %s chars at a time", chunk)
          .containsExactly("1:[a, b,c, say \"hi\", two\nlines]", "3:[, x]");
    }
  }

  @Test
  void crlfAndLoneCrEndRecordsAndReadAsLfInsideQuotes() throws IOException {
    String csv = "t,r\r\n1,\"a\r\nb\"\r\n2,c\r3,\"d\re\"\r";
    for (int chunk : new int[] {1, 2, 5, 1 << 16}) {
      assertThat(read(csv, chunk)).as("read %s chars at a time", chunk)
          .containsExactly("1:[t, r]", "2:[1, a\nb]", "4:[2, c]", "5:[3, d\ne]");
    }
  }

  @Test
  void aLeadingByteOrderMarkIsSkippedAndOnlyThere() throws IOException {
    assertThat(read("\uFEFFtimestamp,recipient\n1,\uFEFFa\n", 1))
        .containsExactly("1:[timestamp, recipient]", "2:[1, \uFEFFa]");
  }

  @Test
  void theLastRecordNeedsNoLineBreakAndBlankLinesAreOneEmptyField() throws IOException {
    assertThat(read("a,b\n\n1,2", 1)).containsExactly("1:[a, b]", "2:[]", "3:[1, 2]");
    assertThat(read("a,\n", 4)).containsExactly("1:[a, ]");
    assertThat(read("", 4)).isEmpty();
  }

  @Test
  void badRecordsAreRefusedWithTheLineTheyStartOn() {
    assertThatThrownBy(() -> read("a\n\"open\nb\nc\n", 3)).hasMessage("line 2: a quoted field is not closed");
    assertThatThrownBy(() -> read("a\nb\n\"ab\"c,d\n", 3)).hasMessageStartingWith("line 3: text after a closing quote ('c')");
    String stray = "a\n\"" + "x,".repeat(SendLogCsv.MAX_RECORD_CHARS) + "\n";
    assertThatThrownBy(() -> read(stray, 1 << 16))
        .hasMessage("line 2: the record is longer than 1048576 characters (a quote that is never closed?)");
  }

  @Test
  void recordsUpToTheLimitAreReadWholeAcrossBufferRefills() throws IOException {
    String big = "y".repeat(SendLogCsv.MAX_RECORD_CHARS - 10);
    assertThat(read("a,b\n1,\"" + big + "\"\n2,z\n", 1 << 13))
        .containsExactly("1:[a, b]", "2:[1, " + big + "]", "3:[2, z]");
  }

  /** Random fields written the RFC 4180 way with random line endings read back as written. */
  @Test
  void randomRecordsReadBackAsWritten() throws IOException {
    SplittableRandom random = new SplittableRandom(14);
    String alphabet = "ab,\"\n\r 名{}";
    for (int round = 0; round < 300; round++) {
      StringBuilder csv = new StringBuilder();
      List<String> expected = new ArrayList<>();
      long line = 1;
      for (int r = 0, records = 1 + random.nextInt(6); r < records; r++) {
        List<String> fields = new ArrayList<>();
        long breaks = 0;
        for (int f = 0, n = 1 + random.nextInt(4); f < n; f++) {
          StringBuilder field = new StringBuilder();
          for (int c = random.nextInt(6); c > 0; c--) {
            field.append(alphabet.charAt(random.nextInt(alphabet.length())));
          }
          String text = field.toString();
          boolean quote = random.nextBoolean() || text.matches("(?s).*[,\"\r\n].*") || n == 1 && text.isEmpty();
          if (f > 0) {
            csv.append(',');
          }
          if (quote) {
            csv.append('"').append(text.replace("\"", "\"\"")).append('"');
            String read = text.replace("\r\n", "\n").replace('\r', '\n');
            fields.add(read);
            breaks += read.chars().filter(ch -> ch == '\n').count();
          } else {
            csv.append(text);
            fields.add(text);
          }
        }
        csv.append(List.of("\n", "\r\n", "\r").get(random.nextInt(3)));
        expected.add(line + ":" + fields);
        line += breaks + 1;
      }
      String text = csv.toString();
      assertThat(read(text, 1 + random.nextInt(7))).as("%s", text).isEqualTo(expected);
    }
  }

  /** A reader that gives at most {@code chunk} characters per read, to cross every buffer boundary. */
  private static final class Chunked extends Reader {
    private final StringReader in;
    private final int chunk;

    Chunked(String text, int chunk) {
      this.in = new StringReader(text);
      this.chunk = chunk;
    }

    @Override
    public int read(char[] buf, int off, int len) throws IOException {
      return in.read(buf, off, Math.min(len, chunk));
    }

    @Override
    public void close() {
      in.close();
    }
  }
}
