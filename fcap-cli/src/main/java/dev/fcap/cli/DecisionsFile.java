package dev.fcap.cli;

import dev.fcap.engine.Engine;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The replay's {@code --decisions} file: one line per row, in log order, "true," or
 * "false,rule-a;rule-b" (the enforced rules that refused the row, in policy order), or for a deferred
 * row that was booked "deferred,SENDAT" (the booked instant, epoch milliseconds). Written as bytes,
 * with each rule's id encoded once: through a {@code Writer}, encoding every line takes more than half
 * of the replay's output time.
 */
final class DecisionsFile implements AutoCloseable {
  private static final byte[] TRUE = "true,".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] FALSE = "false,".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] DEFERRED = "deferred,".getBytes(StandardCharsets.US_ASCII);
  private final OutputStream out;
  /** Per tenant, per rule index: its id in UTF-8 if it is enforced, else null (a shadow rule blocks nothing). */
  private final Map<String, byte[][]> blockingIds = new HashMap<>();
  private String lastTenant;
  private byte[][] lastIds;
  /** Writes a row's blocking rules; one object, not one per row. */
  private final Engine.RuleVerdicts blocking = this::blocking;
  private boolean firstBlocking;

  private final Path file;

  /** Opens {@code file}; one that cannot be opened is a usage error, one that cannot be written a failure. */
  DecisionsFile(Path file, List<Policy> policies) {
    this.file = file;
    try {
      this.out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
    } catch (IOException e) {
      throw CliException.usage(cannotWrite(e));
    }
    for (Policy p : policies) {
      List<Rule> rules = p.rules();
      byte[][] ids = new byte[rules.size()][];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = rules.get(i).enforced() ? rules.get(i).id().getBytes(StandardCharsets.UTF_8) : null;
      }
      blockingIds.put(p.tenant(), ids);
    }
  }

  /** Writes the line of row {@code row} of a decided batch, a row of {@code tenant}. */
  void write(String tenant, BatchVerdicts decided, int row) {
    try {
      writeLine(tenant, decided, row);
    } catch (IOException e) {
      throw CliException.failed(cannotWrite(e));
    }
  }

  private String cannotWrite(IOException e) {
    return "cannot write the decisions file " + file + ": " + CliOutput.reason(e);
  }

  private void writeLine(String tenant, BatchVerdicts decided, int row) throws IOException {
    boolean allowed = decided.allowed(row);
    long bookedAt = decided.bookedAt(row);
    out.write(allowed ? TRUE : bookedAt != 0 ? DEFERRED : FALSE);
    if (bookedAt != 0) {
      out.write(Long.toString(bookedAt).getBytes(StandardCharsets.US_ASCII));
    } else if (!allowed) {
      if (!tenant.equals(lastTenant)) {
        lastTenant = tenant;
        lastIds = blockingIds.get(tenant); // a tenant without rules is never refused
      }
      firstBlocking = true;
      try {
        decided.forEachApplied(row, blocking);
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
    }
    out.write('\n');
  }

  private void blocking(int index, boolean allowed, boolean enforced) {
    byte[] id = lastIds[index];
    if (!allowed && enforced && id != null) {
      try {
        if (!firstBlocking) {
          out.write(';');
        }
        out.write(id);
      } catch (IOException e) {
        throw new UncheckedIOException(e); // through the visitor; write() rethrows the cause
      }
      firstBlocking = false;
    }
  }

  @Override
  public void close() {
    try {
      out.close();
    } catch (IOException e) {
      throw CliException.failed(cannotWrite(e));
    }
  }
}
