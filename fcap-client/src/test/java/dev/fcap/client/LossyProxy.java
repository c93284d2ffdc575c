package dev.fcap.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 proxy on loopback that forwards every request to a server but loses the answers of
 * the first {@code drops} requests: the server did the work, the client sees the connection close.
 * The one failure a retry without a messageId would count twice. With {@code drops} negative it
 * forwards nothing and never answers (a server that hangs).
 */
final class LossyProxy implements AutoCloseable {
  private final ServerSocket socket;
  private final String target;
  private final int drops;
  private final AtomicInteger requests = new AtomicInteger();
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final Thread acceptor;
  /** Answers a request that carries a messageId as a server before message ids does (400 unknown_field). */
  volatile boolean refuseMessageIds;

  LossyProxy(String target, int drops) throws IOException {
    this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.target = target;
    this.drops = drops;
    this.acceptor = new Thread(this::acceptLoop, "lossy-proxy");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  String url() {
    return "http://127.0.0.1:" + socket.getLocalPort();
  }

  /** Requests received (forwarded or hung). */
  int requests() {
    return requests.get();
  }

  private void acceptLoop() {
    while (!socket.isClosed()) {
      try {
        Socket c = socket.accept();
        Thread t = new Thread(() -> serve(c), "lossy-proxy-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket c) {
    try (c) {
      InputStream in = c.getInputStream();
      String head = readHead(in);
      if (head == null) {
        return;
      }
      String[] lines = head.split("\r\n");
      String[] start = lines[0].split(" ");
      int length = 0;
      for (String l : lines) {
        if (l.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
          length = Integer.parseInt(l.substring(15).trim());
        }
      }
      byte[] body = in.readNBytes(length);
      int n = requests.incrementAndGet();
      if (drops < 0) {
        in.read(); // never answers: waits until the client gives up and closes
        return;
      }
      if (refuseMessageIds && new String(body, StandardCharsets.UTF_8).contains("\"messageId\"")) {
        String error = "{\"error\": {\"code\": \"unknown_field\", \"message\": \"unknown field 'messageId'\", "
            + "\"field\": \"messageId\"}}";
        if (start[1].endsWith("/batch")) {
          // such a server refuses each item of a batch in its place
          int items = Codec.MAPPER.readTree(body).path("requests").size();
          answer(c, 200, ("{\"results\": [" + String.join(", ", java.util.Collections.nCopies(items, error)) + "]}")
              .getBytes(StandardCharsets.UTF_8));
        } else {
          answer(c, 400, error.getBytes(StandardCharsets.UTF_8));
        }
        return;
      }
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(target + start[1]))
          .method(start[0], body.length == 0 ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofByteArray(body));
      for (String l : lines) {
        int colon = l.indexOf(':');
        String name = colon > 0 ? l.substring(0, colon).trim().toLowerCase(Locale.ROOT) : "";
        if (name.equals("content-type") || name.equals("authorization")) {
          b.header(name, l.substring(colon + 1).trim());
        }
      }
      HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
      if (n <= drops) {
        return; // the server answered; the client never hears it
      }
      answer(c, r.statusCode(), r.body());
    } catch (IOException e) {
      // the client went away
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void answer(Socket c, int status, byte[] body) throws IOException {
    OutputStream out = c.getOutputStream();
    out.write(("HTTP/1.1 " + status + " X\r\nContent-Type: application/json\r\nContent-Length: " + body.length
        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    int b;
    while ((b = in.read()) >= 0) {
      head.write(b);
      matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
          ? matched + 1 : 0;
      if (matched == 4) {
        return head.toString(StandardCharsets.US_ASCII);
      }
    }
    return null;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
