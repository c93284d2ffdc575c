package dev.fcap.server.audit;

import java.io.IOException;
import java.util.List;

/**
 * Where audit events end up. Called from the one audit writer thread only, with batches; a sink may
 * block (disk, network) without ever slowing a decision. Implementations: {@link FileAuditSink}
 * (JSON lines with rotation) and, in module fcap-server-redis, a Redis Stream sink with MAXLEN.
 */
public interface AuditSink extends AutoCloseable {

  void write(List<AuditEvent> events) throws IOException;

  /** Flushes and releases the sink. */
  @Override
  void close() throws IOException;

  /** A sink that keeps nothing ({@code audit.sink: none}). */
  static AuditSink none() {
    return new AuditSink() {
      @Override
      public void write(List<AuditEvent> events) {}

      @Override
      public void close() {}
    };
  }
}
