package dev.fcap.server.http;

import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.server.RequestTimeoutException;
import com.linecorp.armeria.server.ServerErrorHandler;
import com.linecorp.armeria.server.ServiceConfig;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.fcap.server.guard.ApiException;
import java.nio.charset.StandardCharsets;

/** Renders what Armeria refuses before a handler runs (no route, wrong method, body too large) as JSON errors. */
public final class JsonErrorHandler implements ServerErrorHandler {
  private final RequestGuard guard;

  /** @param guard answers requests that timed out (408, counted, logged at a bounded rate) */
  public JsonErrorHandler(RequestGuard guard) {
    this.guard = guard;
  }

  @Override
  public HttpResponse onServiceException(ServiceRequestContext ctx, Throwable cause) {
    if (cause instanceof RequestTimeoutException) {
      return guard.timedOut(ctx);
    }
    return HttpApi.failure(cause);
  }

  @Override
  public AggregatedHttpResponse renderStatus(ServiceRequestContext ctx, ServiceConfig config, RequestHeaders headers,
      HttpStatus status, String description, Throwable cause) {
    ApiException e = forStatus(status.code(), headers, description);
    byte[] body = Json.bytes(g -> {
      g.writeStartObject();
      Json.writeErrorField(g, e);
      g.writeEndObject();
    });
    return AggregatedHttpResponse.of(status, MediaType.JSON_UTF_8, new String(body, StandardCharsets.UTF_8));
  }

  /** The JSON error for a status Armeria produced itself. */
  static ApiException forStatus(int code, RequestHeaders headers, String description) {
    HttpStatus status = HttpStatus.valueOf(code);
    String what = headers == null ? "" : headers.method() + " " + headers.path();
    return switch (status.code()) {
      case 404 -> new ApiException(404, "not_found", "no such endpoint: " + what + " (see docs/server.md)", null);
      case 405 -> new ApiException(405, "method_not_allowed", "method not allowed: " + what, null);
      case 408 -> RequestGuard.timeoutError(0);
      case 413 -> new ApiException(413, "body_too_large", "the request body is larger than the limit "
          + "(limits.maxBodyBytes); split the batch", null);
      default -> new ApiException(status.code(), status.reasonPhrase().toLowerCase(java.util.Locale.ROOT)
          .replace(' ', '_'), description != null ? description : status.reasonPhrase(), null);
    };
  }
}
