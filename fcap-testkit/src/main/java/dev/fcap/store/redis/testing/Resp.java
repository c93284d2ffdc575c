package dev.fcap.store.redis.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal RESP2 client over a plain socket, for the harness's own checks (readiness, INFO,
 * CLUSTER INFO, SENTINEL, SCRIPT FLUSH, DEBUG commands), independent of the client under test.
 * Replies: String (simple and bulk), Long, List, null; an error reply throws {@link RespError}.
 */
public final class Resp implements AutoCloseable {
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  /** A Redis error reply. */
  public static final class RespError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RespError(String message) {
      super(message);
    }
  }

  public Resp(int port) throws IOException {
    socket = new Socket();
    socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
    socket.setSoTimeout(10_000);
    in = new BufferedInputStream(socket.getInputStream());
    out = socket.getOutputStream();
  }

  /** Sends one command and reads its reply. */
  public Object call(Object... args) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    b.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
    for (Object a : args) {
      byte[] bytes = a instanceof byte[] raw ? raw : String.valueOf(a).getBytes(StandardCharsets.UTF_8);
      b.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      b.writeBytes(bytes);
      b.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    }
    out.write(b.toByteArray());
    out.flush();
    return read();
  }

  /** One command on a fresh connection. */
  public static Object once(int port, Object... args) throws IOException {
    try (Resp r = new Resp(port)) {
      return r.call(args);
    }
  }

  private Object read() throws IOException {
    int type = in.read();
    String line = line();
    return switch (type) {
      case '+' -> line;
      case '-' -> throw new RespError(line);
      case ':' -> Long.parseLong(line);
      case '$' -> {
        int len = Integer.parseInt(line);
        if (len < 0) {
          yield null;
        }
        byte[] data = in.readNBytes(len);
        in.readNBytes(2);
        yield new String(data, StandardCharsets.UTF_8);
      }
      case '*' -> {
        int len = Integer.parseInt(line);
        if (len < 0) {
          yield null;
        }
        List<Object> list = new ArrayList<>(len);
        for (int i = 0; i < len; i++) {
          list.add(read());
        }
        yield list;
      }
      case -1 -> throw new IOException("connection closed");
      default -> throw new IOException("unexpected RESP type " + (char) type);
    };
  }

  private String line() throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != '\r') {
      if (c < 0) {
        throw new IOException("connection closed");
      }
      b.write(c);
    }
    in.read();
    return b.toString(StandardCharsets.UTF_8);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
