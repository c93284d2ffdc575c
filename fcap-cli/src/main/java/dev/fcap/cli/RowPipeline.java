package dev.fcap.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Parses a send log on a thread of its own, a batch of rows at a time, while the caller decides:
 * parsing and deciding each take about a core, so overlapping them nearly doubles replay
 * throughput. Order is kept; a bad row is delivered in its place, after every row before it, so the
 * replay stops exactly there. The queue is bounded: memory stays flat however long the log. At most
 * {@code QUEUED + 2} batches of {@link #BATCH} rows live at once (18,432 rows: those queued, the
 * one the parser fills, the one being decided), about 12 MB at the ~650 bytes a row of the seed
 * log takes, plus one record of at most {@link SendLogCsv#MAX_RECORD_CHARS} in the parser's buffer.
 * (Batches of 4,096 rows, the deciders meeting a quarter as often, make no measurable difference to
 * the wall time of a 10^7-row replay: 0.94-1.03x over 13 pairs.)
 * {@code ReplayPipelineTest} holds the decisions to those of reading and deciding row by row.
 */
final class RowPipeline implements AutoCloseable {
  static final int BATCH = 1024;
  private static final int QUEUED = 16;
  private static final Object END = new Object();

  private final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(QUEUED);
  private final Thread parser;
  private boolean ended;

  RowPipeline(SendLog log) {
    parser = new Thread(() -> parse(log), "fcap-replay-parser");
    parser.setDaemon(true);
    parser.start();
  }

  private void parse(SendLog log) {
    try {
      while (true) {
        SendLog.Row[] rows = new SendLog.Row[BATCH];
        int n = 0;
        Object failure = null;
        try {
          while (n < BATCH && (rows[n] = log.next()) != null) {
            n++;
          }
        } catch (RuntimeException | IOException e) {
          failure = e;
        }
        if (n > 0) {
          queue.put(n == BATCH ? rows : java.util.Arrays.copyOf(rows, n));
        }
        if (failure != null) {
          queue.put(failure);
          return;
        }
        if (n < BATCH) {
          queue.put(END);
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // closed early: the consumer is gone
    }
  }

  /**
   * The next batch of rows in log order, or null at the end; rethrows what the parser hit, in its
   * place (after every row before it).
   */
  SendLog.Row[] nextBatch() throws IOException {
    if (ended) {
      return null;
    }
    Object item;
    try {
      item = queue.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    if (item instanceof SendLog.Row[] rows) {
      return rows;
    }
    ended = true;
    if (item == END) {
      return null;
    } else if (item instanceof IOException e) {
      throw e;
    } else if (item instanceof UncheckedIOException e) {
      throw e.getCause();
    }
    throw (RuntimeException) item;
  }

  @Override
  public void close() {
    parser.interrupt();
  }
}
