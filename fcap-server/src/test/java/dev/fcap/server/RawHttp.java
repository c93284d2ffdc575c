package dev.fcap.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * HTTP/1.1 written by hand on a socket, for what {@code java.net.http} will not send: any {@code Host},
 * a body shorter than its {@code Content-Length}, a request that stops half way.
 */
final class RawHttp {
  private RawHttp() {}

  record Response(int status, String head, String body) {
    JsonNode json() {
      try {
        return TestServer.JSON.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    String errorCode() {
      return json().path("error").path("code").asText(null);
    }
  }

  /** Sends a request with {@code Connection: close} and the given headers and body; reads the whole answer. */
  static Response send(int port, String method, String path, Map<String, String> headers, String body) {
    StringBuilder req = new StringBuilder(method + " " + path + " HTTP/1.1\r\n");
    if (!headers.containsKey("Host")) {
      req.append("Host: 127.0.0.1:").append(port).append("\r\n");
    }
    headers.forEach((k, v) -> req.append(k).append(": ").append(v).append("\r\n"));
    byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    if (body != null && !headers.containsKey("Content-Length")) {
      req.append("Content-Length: ").append(bytes.length).append("\r\n");
    }
    req.append("Connection: close\r\n\r\n");
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(30_000);
      s.getOutputStream().write(req.toString().getBytes(StandardCharsets.ISO_8859_1));
      s.getOutputStream().write(bytes);
      s.getOutputStream().flush();
      return read(s.getInputStream());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads one response: its head, then Content-Length bytes (or chunks, or up to the end of the stream). */
  static Response read(InputStream in) throws IOException {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    int headEnd = -1;
    long length = -1;
    boolean chunked = false;
    byte[] buf = new byte[8192];
    for (int n; (n = in.read(buf)) > 0; ) {
      all.write(buf, 0, n);
      String text = all.toString(StandardCharsets.ISO_8859_1);
      if (headEnd < 0 && (headEnd = text.indexOf("\r\n\r\n")) >= 0) {
        for (String line : text.substring(0, headEnd).split("\r\n")) {
          String l = line.toLowerCase(java.util.Locale.ROOT);
          if (l.startsWith("content-length:")) {
            length = Long.parseLong(l.substring(15).trim());
          } else if (l.startsWith("transfer-encoding:") && l.contains("chunked")) {
            chunked = true;
          }
        }
      }
      if (headEnd >= 0 && (length >= 0 && all.size() >= headEnd + 4 + length
          || chunked && text.endsWith("0\r\n\r\n"))) {
        break;
      }
    }
    String text = all.toString(StandardCharsets.UTF_8);
    int split = text.indexOf("\r\n\r\n");
    String head = split < 0 ? text : text.substring(0, split);
    String body = split < 0 ? "" : text.substring(split + 4);
    if (chunked) {
      body = unchunk(body);
    }
    int status = head.length() >= 12 ? Integer.parseInt(head.substring(9, 12)) : -1;
    return new Response(status, head, body);
  }

  private static String unchunk(String body) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (i < body.length()) {
      int eol = body.indexOf("\r\n", i);
      int size = Integer.parseInt(body.substring(i, eol).trim(), 16);
      if (size == 0) {
        break;
      }
      out.append(body, eol + 2, eol + 2 + size);
      i = eol + 2 + size + 2;
    }
    return out.toString();
  }
}
