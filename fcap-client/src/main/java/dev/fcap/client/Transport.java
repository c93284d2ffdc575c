package dev.fcap.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One HTTP call with its retries. An attempt ends in one of three ways: a 2xx answer (done), a 4xx
 * answer ({@link FcapException}: the request is wrong, retrying cannot help), or a failure that may
 * pass: no connection, no answer within the request timeout, or 429/502/503/504. Such a failure is
 * retried after a backoff if the call is safe to repeat ({@code idempotent}: it carries a messageId,
 * or changes nothing, or is idempotent on the server) or if the request never left (connection
 * refused or not established in time); after the last attempt it becomes a
 * {@link FcapUnavailableException}.
 */
final class Transport {
  private final HttpClient http;
  private final ClientOptions options;

  Transport(ClientOptions options) {
    this.options = options;
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(options.connectTimeout()).build();
  }

  /** The answer of a 2xx: status and JSON body (null when empty). */
  record Answer(int status, JsonNode body) {}

  CompletableFuture<Answer> call(String method, String pathAndQuery, byte[] body, boolean idempotent) {
    return call(method, pathAndQuery, body, idempotent, options.maxAttempts());
  }

  CompletableFuture<Answer> call(String method, String pathAndQuery, byte[] body, boolean idempotent, int attempts) {
    HttpRequest.Builder b = HttpRequest.newBuilder(options.uri().resolve(pathAndQuery))
        .timeout(options.requestTimeout()).header("Accept", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    if (options.apiKey() != null) {
      b.header("Authorization", "Bearer " + options.apiKey());
    }
    CompletableFuture<Answer> result = new CompletableFuture<>();
    attempt(b.build(), idempotent, 1, attempts, result);
    return result;
  }

  private void attempt(HttpRequest request, boolean idempotent, int attempt, int attempts,
      CompletableFuture<Answer> result) {
    http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).whenComplete((response, error) -> {
      try {
        Throwable failure = error != null ? unwrap(error) : null;
        if (failure == null) {
          int status = response.statusCode();
          if (status / 100 == 2) {
            result.complete(new Answer(status, Codec.tree(response.body())));
            return;
          }
          FcapException refused = Codec.error(status, response.body());
          if (!passing(status)) {
            result.completeExceptionally(refused);
            return;
          }
          failure = refused;
        }
        boolean neverSent = failure instanceof ConnectException || failure instanceof HttpConnectTimeoutException
            || failure.getCause() instanceof ConnectException;
        boolean passes = failure instanceof IOException || failure instanceof FcapException;
        if (passes && (idempotent || neverSent) && attempt < attempts) {
          CompletableFuture.delayedExecutor(backoffMillis(attempt), TimeUnit.MILLISECONDS)
              .execute(() -> attempt(request, idempotent, attempt + 1, attempts, result));
          return;
        }
        result.completeExceptionally(passes ? unavailable(failure, attempt) : failure);
      } catch (RuntimeException e) {
        result.completeExceptionally(e);
      }
    });
  }

  /** Statuses that say "not now" rather than "not this": overload, a proxy without a server behind it. */
  private static boolean passing(int status) {
    return status == 429 || status == 502 || status == 503 || status == 504;
  }

  private FcapUnavailableException unavailable(Throwable last, int attempts) {
    String what = last instanceof HttpTimeoutException ? "no answer within " + options.requestTimeout().toMillis() + " ms"
        : last instanceof FcapException e ? "HTTP " + e.status() + " " + e.code() + ": " + e.getMessage()
        : last.toString();
    int status = last instanceof FcapException e ? e.status() : 0;
    String code = last instanceof FcapException e ? e.code() : "unreachable";
    return new FcapUnavailableException(status, code, "fcap server " + options.uri() + " unavailable after " + attempts
        + (attempts == 1 ? " attempt: " : " attempts: ") + what, attempts, last);
  }

  /** Exponential, capped, each wait drawn between half and all of it. */
  private long backoffMillis(int attempt) {
    long base = options.retryBackoff().toMillis() << Math.min(attempt - 1, 20);
    long capped = Math.min(base, options.maxRetryBackoff().toMillis());
    return capped / 2 + ThreadLocalRandom.current().nextLong(capped / 2 + 1);
  }

  static Throwable unwrap(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
