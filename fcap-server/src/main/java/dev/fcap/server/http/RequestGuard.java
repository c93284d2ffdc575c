package dev.fcap.server.http;

import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.server.DecoratingHttpServiceFunction;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.RequestTimeoutException;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.guard.Safeguards;
import dev.fcap.server.guard.ThrottledLog;
import dev.fcap.server.auth.Authenticator;
import dev.fcap.server.metrics.ServerMetrics;
import io.netty.util.AttributeKey;
import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;

/**
 * The checks every request passes before any handler runs (docs/security.md).
 *
 * <p><b>Browsers.</b> Without API keys the server trusts every caller that reaches loopback, and an
 * operator's browser is such a caller: any page it shows may send a "simple" cross-site POST (no
 * preflight) or, by DNS rebinding, make its own name resolve to 127.0.0.1 and read the answers. So a
 * keyless server answers only requests whose {@code Host} is a loopback name or address, the address
 * it listens on, or one of {@code http.allowedHosts} (rebinding needs a foreign name), and refuses a
 * request whose {@code Origin} is another origin than the server's own, unless listed in
 * {@code http.allowedOrigins} (CSRF). With API keys a browser never holds a key it could attach, so
 * these two checks are left out. Whatever the mode, a body must be {@code application/json} (415
 * otherwise): the content types a page can send without a preflight are never accepted.
 *
 * <p><b>Slow or hostile bodies.</b> With API keys, the credentials are checked on the headers, before
 * a byte of body is read: a caller without a key cannot hold a connection open or fill the log. A
 * body that does not arrive within {@code http.requestTimeout} is answered 408 and counted, with one
 * log line per interval ({@link ThrottledLog}), never a stack trace per connection. A JSON body is
 * held to its shape limits as the handler parses it ({@code BodyShape}), in the same pass.
 *
 * <p>Tested by {@code BrowserSafetyIT} (real requests, and headless Chromium on a second origin),
 * {@code HostileInputIT} (slow bodies, shapes) and {@code HostileInputFuzzIT}.
 */
public final class RequestGuard implements DecoratingHttpServiceFunction {
  private static final Set<HttpMethod> WITH_BODY = Set.of(HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH);
  /**
   * The whole request the guard read to check its body: the API's handlers take it from the context
   * instead of reading the request again (rebuilding it as a stream for them would cost ~1 KB and a
   * pass over the body per decision). The request itself goes on read, so a
   * service behind the guard must not read a body: the handlers take this one, and the other services
   * (static files, gRPC, which the guard does not read, and the 404 fallback) never read one.
   */
  static final AttributeKey<AggregatedHttpRequest> WHOLE_REQUEST =
      AttributeKey.valueOf(RequestGuard.class, "WHOLE_REQUEST");
  private final Authenticator auth;
  private final Safeguards safeguards;
  private final Set<String> allowedHosts;
  private final Set<String> allowedOrigins;
  private final String listenHost;
  private final ServerMetrics metrics;
  private final ThrottledLog timeouts;

  public RequestGuard(Authenticator auth, Safeguards safeguards, String listenHost, ServerMetrics metrics,
      ThrottledLog timeouts) {
    this.auth = auth;
    this.safeguards = safeguards;
    this.allowedHosts = safeguards.allowedHosts().stream().map(h -> h.toLowerCase(Locale.ROOT))
        .collect(Collectors.toUnmodifiableSet());
    this.allowedOrigins = safeguards.allowedOrigins().stream().map(RequestGuard::normalOrigin)
        .collect(Collectors.toUnmodifiableSet());
    this.listenHost = listenHost.toLowerCase(Locale.ROOT);
    this.metrics = metrics;
    this.timeouts = timeouts;
  }

  @Override
  public HttpResponse serve(HttpService delegate, ServiceRequestContext ctx, HttpRequest req) throws Exception {
    RequestHeaders headers = req.headers();
    MediaType type = headers.contentType();
    boolean grpc = type != null && type.subtype().startsWith("grpc") && type.type().equals("application");
    // an import streams a CSV or NDJSON body of its own, unbounded, which it checks itself
    boolean streamed = SuppressionImport.streams(ctx.path(), headers.method());
    try {
      if (auth.open()) {
        checkHost(ctx, headers);
        checkOrigin(ctx, headers);
      }
      if (type != null && !grpc && !streamed && !type.is(MediaType.JSON)) {
        throw unsupported(type.toString());
      }
      if (!grpc && !auth.open() && needsKey(ctx.path())) {
        auth.authenticate(headers.get(HttpHeaderNames.AUTHORIZATION), headers.get("x-api-key"));
      }
    } catch (ApiException e) {
      metrics.httpRefused(e.code());
      return Json.error(e);
    }
    if (grpc || streamed || !WITH_BODY.contains(headers.method())) {
      return delegate.serve(ctx, req);
    }
    return HttpResponse.of(req.aggregate().handle((agg, error) -> {
      if (error != null) {
        return bodyFailed(ctx, error);
      }
      try {
        if (!agg.content().isEmpty() && type == null) {
          throw unsupported("none");
        }
        ctx.setAttr(WHOLE_REQUEST, agg);
        return delegate.serve(ctx, req); // read: the handler takes the body from the context
      } catch (ApiException e) {
        metrics.httpRefused(e.code());
        return Json.error(e);
      } catch (Exception e) {
        return HttpApi.failure(e);
      }
    }));
  }

  /** A body that did not arrive: 408 when it was too slow, otherwise as any failure. */
  private HttpResponse bodyFailed(ServiceRequestContext ctx, Throwable error) {
    Throwable t = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (t instanceof RequestTimeoutException || ctx.isTimedOut()) {
      return timedOut(ctx);
    }
    return HttpApi.failure(t);
  }

  /** The answer to a request that timed out: 408, one counter, at most one log line per interval. */
  HttpResponse timedOut(ServiceRequestContext ctx) {
    metrics.httpRefused("request_timeout");
    timeouts.warn("request timed out after " + safeguards.requestTimeout().toMillis() + " ms (http.requestTimeout): "
        + ctx.method() + " " + ctx.path() + " from " + ctx.remoteAddress());
    return Json.error(timeoutError(safeguards.requestTimeout().toMillis()));
  }

  static ApiException timeoutError(long ms) {
    return new ApiException(408, "request_timeout", "the request did not arrive " + (ms > 0 ? "within " + ms + " ms"
        : "in time") + " (http.requestTimeout); send the whole body at once", null);
  }

  private static boolean needsKey(String path) {
    return path.startsWith("/v1/") || path.equals("/metrics");
  }

  private static ApiException unsupported(String type) {
    return new ApiException(415, "unsupported_media_type", "the body must be JSON: send 'Content-Type: "
        + "application/json' (got " + type + ")", "Content-Type");
  }

  private void checkHost(ServiceRequestContext ctx, RequestHeaders headers) {
    String authority = headers.authority();
    if (authority == null || authority.isEmpty()) {
      return; // HTTP/1.0 without Host: no name to rebind
    }
    String host = hostOf(authority);
    if (host == null || !allowedHost(host, ctx)) {
      throw new ApiException(403, "forbidden_host", "this server has no API keys and answers only loopback names "
          + "and its own address; Host '" + authority + "' is none of them (add it to http.allowedHosts, or "
          + "configure apiKeys)", "Host");
    }
  }

  private boolean allowedHost(String host, ServiceRequestContext ctx) {
    if (host.equals("localhost") || host.endsWith(".localhost") || host.equals(listenHost)
        || allowedHosts.contains(host)) {
      return true;
    }
    byte[] literal = NetUtil.createByteArrayFromIpAddressString(host);
    if (literal == null) {
      return false; // a name, never resolved here: resolving is what rebinding exploits
    }
    try {
      InetAddress address = InetAddress.getByAddress(literal);
      InetSocketAddress local = ctx.localAddress();
      return address.isLoopbackAddress() || address.equals(local.getAddress());
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  /** The lower-case host of an authority: {@code [::1]:8080} is {@code ::1}, {@code a.b:80} is {@code a.b}. */
  static String hostOf(String authority) {
    String a = authority.trim().toLowerCase(Locale.ROOT);
    if (a.startsWith("[")) {
      int end = a.indexOf(']');
      return end < 0 ? null : a.substring(1, end);
    }
    int colon = a.indexOf(':');
    if (colon >= 0 && a.indexOf(':', colon + 1) >= 0) {
      return a; // a bare IPv6 address
    }
    return colon < 0 ? a : a.substring(0, colon);
  }

  private void checkOrigin(ServiceRequestContext ctx, RequestHeaders headers) {
    String origin = headers.get(HttpHeaderNames.ORIGIN);
    if (origin == null) {
      return; // not sent by a browser page (or a same-origin GET)
    }
    String o = normalOrigin(origin);
    String authority = headers.authority();
    if (authority != null && (o.equals("http://" + authority.toLowerCase(Locale.ROOT))
        || o.equals("https://" + authority.toLowerCase(Locale.ROOT)))) {
      return; // the console, served by this server
    }
    if (allowedOrigins.contains(o)) {
      return;
    }
    throw new ApiException(403, "forbidden_origin", "this server has no API keys and refuses requests from web pages "
        + "of other origins; Origin '" + origin + "' is not this server's (add it to http.allowedOrigins to allow it)",
        "Origin");
  }

  private static String normalOrigin(String origin) {
    String o = origin.trim().toLowerCase(Locale.ROOT);
    return o.endsWith("/") ? o.substring(0, o.length() - 1) : o;
  }
}
