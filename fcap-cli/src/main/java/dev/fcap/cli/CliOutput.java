package dev.fcap.cli;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

/**
 * Where the commands write, and the check that it was written. A {@link PrintWriter} (like
 * {@code System.out}, a {@code PrintStream}) swallows write failures: a full disk or
 * {@code > /dev/full} would go unnoticed and exit 0. A command calls {@link #check} once it has
 * written; this writer keeps the failure, so the message can say why ("No space left on device").
 */
final class CliOutput extends PrintWriter {
  private final Recorder recorder;

  private CliOutput(Recorder recorder, Charset charset, boolean autoFlush) {
    super(new OutputStreamWriter(recorder, charset), autoFlush);
    this.recorder = recorder;
  }

  /** Standard output, not through {@code System.out} (which hides why a write failed). */
  static PrintWriter stdout() {
    return over(new FileOutputStream(FileDescriptor.out));
  }

  /**
   * A writer over {@code stream} as picocli's own over standard output: in its charset, flushed at
   * each line.
   */
  static PrintWriter over(OutputStream stream) {
    String encoding = System.getProperty("sun.stdout.encoding");
    return new CliOutput(new Recorder(stream), encoding != null && Charset.isSupported(encoding)
        ? Charset.forName(encoding) : Charset.defaultCharset(), true);
  }

  /** A writer over a file's {@code stream} in {@code charset}, flushed by {@link #check}. */
  static PrintWriter over(OutputStream stream, Charset charset) {
    return new CliOutput(new Recorder(stream), charset, false);
  }

  /**
   * Flushes {@code out}; if anything written to it failed, a {@link CliException} (exit code 1)
   * "cannot write WHAT: reason". A reader that stopped reading ({@code fcap gen | head}: a broken
   * pipe) is no failure: it took what it wanted.
   */
  static void check(PrintWriter out, String what) {
    if (out.checkError()) {
      IOException failure = out instanceof CliOutput c ? c.recorder.failure : null;
      if (failure != null && "Broken pipe".equals(failure.getMessage())) {
        return;
      }
      throw CliException.failed("cannot write " + what + ": " + (failure == null ? "a write failed" : reason(failure)));
    }
  }

  /** Why a file could not be opened or written, in a few words. */
  static String reason(IOException e) {
    if (e instanceof NoSuchFileException) {
      return "its directory does not exist";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return f.getReason();
    }
    return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
  }

  /** Passes writes on, keeping the first failure. */
  private static final class Recorder extends FilterOutputStream {
    IOException failure;

    Recorder(OutputStream out) {
      super(out);
    }

    @Override
    public void write(int b) throws IOException {
      try {
        out.write(b);
      } catch (IOException e) {
        throw kept(e);
      }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      try {
        out.write(b, off, len);
      } catch (IOException e) {
        throw kept(e);
      }
    }

    @Override
    public void flush() throws IOException {
      try {
        out.flush();
      } catch (IOException e) {
        throw kept(e);
      }
    }

    private IOException kept(IOException e) {
      if (failure == null) {
        failure = e;
      }
      return e;
    }
  }
}
