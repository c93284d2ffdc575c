package dev.fcap.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * The Java client of an fcap server (HTTP/JSON, the API of {@code /openapi.json}). Thread-safe; make
 * one per server and share it.
 *
 * <pre>{@code
 * FcapClient fcap = FcapClient.create(ClientOptions.builder("http://fcap:8080")
 *     .apiKey(System.getenv("FCAP_API_KEY")).fallback(Fallback.allow()).build());
 * Decision d = fcap.decide(Message.builder("+8613800000000").content(text).build());
 * if (d.allowed()) { send(); } else { defer(d.retryAfterMs()); }
 * }</pre>
 *
 * <p><b>Design.</b> Every operation is asynchronous underneath ({@code *Async} returns a
 * {@link CompletableFuture}); the blocking form waits for it. A call is a {@link Transport} call: up
 * to {@link ClientOptions#maxAttempts()} attempts, each bounded by the request timeout. <i>Invariant:
 * a retry never counts a message twice.</i> A decision is retried only with the same
 * {@code messageId} (the caller's, or one generated once per call), which the server uses to return
 * the first decision instead of counting again; without an id it is retried only when the request
 * never left. When every attempt fails because the server is unreachable or overloaded, a decision
 * is answered by the {@link Fallback} and marked {@link Decision#fallback()}; release, inspect and
 * reset fail with {@link FcapUnavailableException}. A 4xx is the caller's mistake: an
 * {@link FcapException} at once, never retried, never a fallback. Tested against a real server,
 * stopped and restarted under load, in {@code FcapClientIT}.
 */
public final class FcapClient implements AutoCloseable {
  private final ClientOptions options;
  private final Transport transport;
  /** False once the server refused a generated messageId (see {@link #refusesMessageIds}). */
  private volatile boolean serverTakesMessageIds = true;

  private FcapClient(ClientOptions options) {
    this.options = Objects.requireNonNull(options, "options");
    this.transport = new Transport(options);
  }

  public static FcapClient create(ClientOptions options) {
    return new FcapClient(options);
  }

  /** A client of the server at {@code url} with default options. */
  public static FcapClient create(String url) {
    return new FcapClient(ClientOptions.create(url));
  }

  public ClientOptions options() {
    return options;
  }

  // --- decisions ---------------------------------------------------------------------------------

  /** Decides and records (if admitted) one message. */
  public Decision decide(Message message) {
    return join(decideAsync(message));
  }

  public CompletableFuture<Decision> decideAsync(Message message) {
    return decision(message, false);
  }

  /**
   * Decides {@code message}, booking it for later if it may not go now: {@link Decision#deferred()}
   * then says it was booked for {@link Decision#sendAt()} ({@link Defer}). The same as
   * {@code decide(message.withDefer(defer))}.
   */
  public Decision decide(Message message, Defer defer) {
    return join(decideAsync(message, defer));
  }

  public CompletableFuture<Decision> decideAsync(Message message, Defer defer) {
    return decideAsync(message.withDefer(Objects.requireNonNull(defer, "defer")));
  }

  /** What {@link #decide} would answer now, recording nothing (a dry run; a deferral books nothing). */
  public Decision check(Message message) {
    return join(checkAsync(message));
  }

  public CompletableFuture<Decision> checkAsync(Message message) {
    return decision(message, true);
  }

  private CompletableFuture<Decision> decision(Message message, boolean dryRun) {
    String id = idFor(message);
    ObjectNode body = Codec.message(message, id);
    if (dryRun) {
      body.put("dryRun", true);
    }
    // a dry run records nothing: always safe to repeat
    return transport.call("POST", "/v1/decisions", Codec.bytes(body), dryRun || id != null)
        .thenApply(a -> Codec.decision(a.body(), id))
        .exceptionallyCompose(e -> generated(message, id) && refusesMessageIds(Transport.unwrap(e))
            ? decision(message, dryRun) : CompletableFuture.failedFuture(e))
        .exceptionally(fallback(message, id));
  }

  /**
   * A server that does not know message ids refuses the field; nothing was recorded
   * (a 400 records nothing). The client then stops generating ids for this server, so its retries
   * fall back to the safe rule for messages without one, and says so once. An id the caller gave is
   * never dropped: the caller asked for idempotency, and gets the server's error instead.
   */
  private boolean refusesMessageIds(Throwable error) {
    if (error instanceof FcapException e && e.status() == 400 && "unknown_field".equals(e.code())
        && "messageId".equals(e.field())) {
      if (serverTakesMessageIds) {
        serverTakesMessageIds = false;
        System.getLogger(FcapClient.class.getName()).log(System.Logger.Level.WARNING, "fcap server {0} does not "
            + "accept messageId (an fcap server before message ids): decisions are sent without one, and retried "
            + "only when the request never left", options.uri());
      }
      return true;
    }
    return false;
  }

  private boolean generated(Message message, String id) {
    return id != null && message.messageId() == null;
  }

  /** Decides many messages in one call, in order; a message the server refuses gets its own error. */
  public List<BatchItem> decideAll(List<Message> messages) {
    return join(decideAllAsync(messages));
  }

  public CompletableFuture<List<BatchItem>> decideAllAsync(List<Message> messages) {
    List<String> ids = new ArrayList<>(messages.size());
    ArrayNode requests = Codec.array();
    boolean everyId = true;
    for (Message m : messages) {
      String id = idFor(m);
      ids.add(id);
      everyId &= id != null;
      requests.add(Codec.message(m, id));
    }
    ObjectNode body = Codec.MAPPER.createObjectNode();
    body.set("requests", requests);
    return transport.call("POST", "/v1/decisions/batch", Codec.bytes(body), everyId).thenCompose(a -> {
      List<BatchItem> out = new ArrayList<>(messages.size());
      JsonNode results = a.body().path("results");
      boolean idsRefused = false;
      for (int i = 0; i < results.size(); i++) {
        JsonNode r = results.get(i);
        BatchItem item = r.has("error") ? new BatchItem(null, Codec.error(400, r.get("error")))
            : new BatchItem(Codec.decision(r, ids.get(i)), null);
        idsRefused |= !item.isDecision() && generated(messages.get(i), ids.get(i)) && refusesMessageIds(item.error());
        out.add(item);
      }
      // the items refused for their id recorded nothing; ask again without generated ids
      return idsRefused ? decideAllAsync(messages) : CompletableFuture.completedFuture(out);
    }).exceptionally(error -> {
      List<BatchItem> out = new ArrayList<>(messages.size());
      for (int i = 0; i < messages.size(); i++) {
        out.add(new BatchItem(fallback(messages.get(i), ids.get(i)).apply(error), null));
      }
      return out;
    });
  }

  /**
   * Gives back what an admitted decision counted (the send failed), from any server of the
   * deployment. Idempotent: releasing again answers true and gives back nothing more. False when the
   * decision can no longer be released; {@link #releaseDecision} says why.
   */
  public boolean release(String decisionId) {
    return join(releaseAsync(decisionId));
  }

  public CompletableFuture<Boolean> releaseAsync(String decisionId) {
    return releaseDecisionAsync(decisionId).thenApply(Release::released);
  }

  /** {@link #release(String)}, with the reason when the decision can no longer be released. */
  public Release releaseDecision(String decisionId) {
    return join(releaseDecisionAsync(decisionId));
  }

  public CompletableFuture<Release> releaseDecisionAsync(String decisionId) {
    Objects.requireNonNull(decisionId, "decisionId");
    return transport.call("POST", "/v1/decisions/" + segment(decisionId) + "/release", null, true)
        .thenApply(a -> new Release(a.body().path("released").asBoolean(),
            a.body().hasNonNull("reason") ? a.body().get("reason").asText() : null));
  }

  /**
   * Gives back what the decision of a message counted, named by its {@code messageId} (with its
   * tenant and recipient, as decided): for a caller that kept its own id rather than the decision id.
   * Idempotent; false when unknown, denied or expired.
   */
  public boolean release(Message message) {
    return join(releaseAsync(message));
  }

  public CompletableFuture<Boolean> releaseAsync(Message message) {
    if (message.messageId() == null) {
      throw new IllegalArgumentException("release by message needs the message's messageId");
    }
    // the message names a decision here: its deferral is no part of the name
    return transport.call("POST", "/v1/messages/release",
        Codec.bytes(Codec.message(message.withDefer(null), message.messageId())), true).thenApply(a -> a.body().path("released").asBoolean());
  }

  // --- recipients --------------------------------------------------------------------------------

  /** A recipient's counters and recent denials; {@code tenant} null for the default tenant. */
  public Inspection inspect(String tenant, String recipient) {
    return join(inspectAsync(tenant, recipient));
  }

  public CompletableFuture<Inspection> inspectAsync(String tenant, String recipient) {
    return inspectAsync(tenant, recipient, null);
  }

  /**
   * A recipient's counters, recent denials and send windows, read in {@code timeZone}, the
   * recipient's zone (null: the policy's, else UTC).
   */
  public Inspection inspect(String tenant, String recipient, ZoneId timeZone) {
    return join(inspectAsync(tenant, recipient, timeZone));
  }

  public CompletableFuture<Inspection> inspectAsync(String tenant, String recipient, ZoneId timeZone) {
    String path = recipientPath(tenant, recipient);
    if (timeZone != null) {
      path += (tenant == null ? "?" : "&") + "timeZone=" + segment(timeZone.getId());
    }
    return transport.call("GET", path, null, true).thenApply(a -> Codec.inspection(a.body()));
  }

  /** Forgets a recipient (an erasure request); true if it had counters. */
  public boolean reset(String tenant, String recipient) {
    return join(resetAsync(tenant, recipient));
  }

  public CompletableFuture<Boolean> resetAsync(String tenant, String recipient) {
    return transport.call("DELETE", recipientPath(tenant, recipient), null, true)
        .thenApply(a -> a.body().path("reset").asBoolean());
  }

  /**
   * Adds or replaces {@code recipient}'s entry in the tenant's suppression list (null tenant: the
   * server's default): once this returns, every decision for it on {@code channels} and
   * {@code categories} (empty: every one) is refused, on every node, until {@code expiresAt} (epoch ms;
   * -1: never). Needs the {@code suppress} or {@code admin} role.
   */
  public Suppression suppress(String tenant, String recipient, List<String> channels, List<String> categories,
      String reason, long expiresAt) {
    return join(suppressAsync(tenant, recipient, channels, categories, reason, expiresAt));
  }

  public CompletableFuture<Suppression> suppressAsync(String tenant, String recipient, List<String> channels,
      List<String> categories, String reason, long expiresAt) {
    var body = Codec.MAPPER.createObjectNode();
    channels.forEach(body.putArray("channels")::add);
    categories.forEach(body.putArray("categories")::add);
    if (reason != null) {
      body.put("reason", reason);
    }
    body.put("expiresAt", expiresAt);
    byte[] bytes;
    try {
      bytes = Codec.MAPPER.writeValueAsBytes(body);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return transport.call("PUT", suppressionPath(tenant, recipient), bytes, true)
        .thenApply(a -> Codec.suppression(a.body()));
  }

  /** {@code recipient}'s entry in the tenant's suppression list; empty when it has none (or it expired). */
  public java.util.Optional<Suppression> suppression(String tenant, String recipient) {
    return join(suppressionAsync(tenant, recipient));
  }

  public CompletableFuture<java.util.Optional<Suppression>> suppressionAsync(String tenant, String recipient) {
    return transport.call("GET", suppressionPath(tenant, recipient), null, true)
        .thenApply(a -> java.util.Optional.of(Codec.suppression(a.body())))
        .exceptionallyCompose(e -> Transport.unwrap(e) instanceof FcapException f && f.status() == 404
            ? CompletableFuture.completedFuture(java.util.Optional.empty()) : CompletableFuture.failedFuture(e));
  }

  /** Removes {@code recipient}'s entry; whether it had a live one. */
  public boolean unsuppress(String tenant, String recipient) {
    return join(unsuppressAsync(tenant, recipient));
  }

  public CompletableFuture<Boolean> unsuppressAsync(String tenant, String recipient) {
    return transport.call("DELETE", suppressionPath(tenant, recipient), null, true)
        .thenApply(a -> a.body().path("removed").asBoolean());
  }

  /**
   * Whether the server answers and its store is reachable ({@code GET /ready}), in one attempt:
   * false when it is down, unreachable or its store is away. For health checks.
   */
  public boolean ready() {
    try {
      return transport.call("GET", "/ready", null, true, 1).join().body().path("ready").asBoolean();
    } catch (CompletionException e) {
      if (Transport.unwrap(e) instanceof FcapException) {
        return false;
      }
      throw e;
    }
  }

  /** Nothing to release: the JDK's HTTP client frees its connections when it is no longer referenced. */
  @Override
  public void close() {}

  // --- internals ---------------------------------------------------------------------------------

  private String idFor(Message m) {
    if (m.messageId() != null) {
      return m.messageId();
    }
    return options.generateMessageIds() && serverTakesMessageIds ? options.messageIds().get() : null;
  }

  /** Unavailable: the fallback decides; anything else (a 4xx, a bug) passes through. */
  private Function<Throwable, Decision> fallback(Message message, String id) {
    return error -> {
      Throwable t = Transport.unwrap(error);
      if (t instanceof FcapUnavailableException u) {
        return options.fallback().decide(id == null || id.equals(message.messageId()) ? message
            : message.withMessageId(id), u);
      }
      throw t instanceof RuntimeException r ? r : new CompletionException(t);
    };
  }

  private static String suppressionPath(String tenant, String recipient) {
    Objects.requireNonNull(recipient, "recipient");
    return "/v1/suppressions/" + segment(recipient) + (tenant == null ? "" : "?tenant=" + segment(tenant));
  }

  private static String recipientPath(String tenant, String recipient) {
    Objects.requireNonNull(recipient, "recipient");
    return "/v1/recipients/" + segment(recipient) + (tenant == null ? "" : "?tenant=" + segment(tenant));
  }

  /** Percent-encodes all but RFC 3986's unreserved characters, so any id is one path segment. */
  static String segment(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
          || c == '~') {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
      }
    }
    return out.toString();
  }

  private static <T> T join(CompletableFuture<T> f) {
    try {
      return f.join();
    } catch (CompletionException e) {
      Throwable t = Transport.unwrap(e);
      if (t instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }
}
