package dev.fcap.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.stream.ClosedStreamException;
import com.linecorp.armeria.common.ContentTooLargeException;
import com.linecorp.armeria.common.ResponseCompleteException;
import com.linecorp.armeria.server.HttpStatusException;
import com.linecorp.armeria.server.RequestTimeoutException;
import com.linecorp.armeria.common.ShuttingDownException;
import com.linecorp.armeria.common.ExchangeType;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.RoutingContext;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyParser;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.guard.InputLimits;
import dev.fcap.server.decision.DecisionService;
import dev.fcap.server.guard.Messages;
import dev.fcap.server.admin.RuleChange;
import dev.fcap.server.admin.RulesAdmin;
import dev.fcap.server.auth.ApiKey;
import dev.fcap.server.auth.Authenticator;
import dev.fcap.server.auth.Principal;
import dev.fcap.server.auth.Role;
import dev.fcap.server.metrics.ServerMetrics;
import dev.fcap.store.StoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP/JSON API (docs/server.md is its reference, with examples). Every handler aggregates the
 * body, authenticates, validates, then calls {@link DecisionService} or {@link RulesAdmin}
 * asynchronously; no handler blocks an event loop. Errors are {@code {"error": {code, message, field}}}
 * with a 4xx status, a denial is a 200 with {@code "allowed": false}.
 */
public final class HttpApi {
  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
  private static final Set<String> DECIDE_EXTRA = Set.of("dryRun");
  private final DecisionService decisions;
  private final RulesAdmin rules;
  private final Authenticator auth;
  private final ServerMetrics metrics;
  private final InputLimits limits;

  public HttpApi(DecisionService decisions, RulesAdmin rules, Authenticator auth, ServerMetrics metrics,
      InputLimits limits) {
    this.decisions = decisions;
    this.rules = rules;
    this.auth = auth;
    this.metrics = metrics;
    this.limits = limits;
  }

  /** Binds every route. */
  public void bind(ServerBuilder sb) {
    sb.route().post("/v1/decisions").build(handler(this::decide));
    sb.route().post("/v1/decisions/batch").build(handler(this::batch));
    sb.route().post("/v1/decisions/{decisionId}/release").build(handler(this::release));
    sb.route().post("/v1/messages/release").build(handler(this::releaseMessage));
    sb.route().get("/v1/recipients/{recipient}").build(handler(this::inspect));
    sb.route().delete("/v1/recipients/{recipient}").build(handler(this::reset));
    sb.route().post(SuppressionImport.PATH).requestTimeout(SuppressionImport.TIMEOUT).maxRequestLength(0)
        .build(new SuppressionImport(decisions.suppressions(), auth));
    sb.route().get("/v1/suppressions").build(handler(this::listSuppressions));
    sb.route().get("/v1/suppressions/{recipient}").build(handler(this::getSuppression));
    sb.route().put("/v1/suppressions/{recipient}").build(handler(this::putSuppression));
    sb.route().delete("/v1/suppressions/{recipient}").build(handler(this::deleteSuppression));
    sb.route().get("/v1/rules").build(handler(this::getRules));
    sb.route().put("/v1/rules").build(handler(this::putRules));
    sb.route().post("/v1/rules").build(handler(this::addRule));
    sb.route().post("/v1/rules/validate").build(handler(this::validate));
    sb.route().get("/v1/rules/history").build(handler(this::history));
    sb.route().get("/v1/rules/{id}").build(handler(this::getRule));
    sb.route().put("/v1/rules/{id}").build(handler(this::putRule));
    sb.route().delete("/v1/rules/{id}").build(handler(this::deleteRule));
    sb.route().get("/metrics").build(handler(this::metrics));
    sb.route().get("/health").build((ctx, req) -> Json.ok(g -> {
      g.writeStartObject();
      g.writeStringField("status", "up");
      g.writeEndObject();
    }));
    sb.route().get("/ready").build((ctx, req) -> HttpResponse.of(decisions.ready().thenApply(r ->
        Json.response(r.ready() ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE, g -> {
          g.writeStartObject();
          g.writeBooleanField("ready", r.ready());
          g.writeBooleanField("storeDown", r.storeDown());
          g.writeBooleanField("storeFull", r.storeFull());
          if (r.storeFull()) { // when room may first free, from the last refusal; -1: the store cannot say
            g.writeNumberField("storeFullRetryAfterMs", r.fullRetryAfterMs());
          }
          g.writeNumberField("storeResets", r.storeResets()); // losses of the store's data noticed since start
          if (r.lastReset() != null) {
            g.writeObjectFieldStart("storeLastReset");
            g.writeNumberField("noticedAt", r.lastReset().noticedAt());
            g.writeStringField("detail", r.lastReset().why());
            g.writeEndObject();
          }
          if (r.resetUntil() > 0) { // the failure policy decides until then (failure.storeReset: policy)
            g.writeNumberField("storeResetPolicyUntil", r.resetUntil());
          }
          g.writeEndObject();
        }))));
  }

  /** One API call: the context, the whole request, who is calling. */
  @FunctionalInterface
  interface Handler {
    CompletableFuture<HttpResponse> handle(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who);
  }

  private HttpService handler(Handler h) {
    return new HttpService() {
      @Override
      public HttpResponse serve(ServiceRequestContext ctx, com.linecorp.armeria.common.HttpRequest req) {
        AggregatedHttpRequest read = ctx.attr(RequestGuard.WHOLE_REQUEST); // a body the guard checked
        CompletableFuture<AggregatedHttpRequest> whole = read != null ? CompletableFuture.completedFuture(read)
            : req.aggregate();
        return HttpResponse.of(whole.thenCompose(agg -> {
          RequestHeaders headers = agg.headers();
          Principal who = auth.authenticate(headers.get(HttpHeaderNames.AUTHORIZATION), headers.get("x-api-key"));
          return h.handle(ctx, agg, who);
        }).exceptionally(HttpApi::failure));
      }

      /**
       * Every call is one whole request and one whole response: Armeria can skip its streaming machinery.
       * With API keys the request streams instead, since Armeria reads a unary request whole before any
       * decorator runs: {@link RequestGuard} checks the key first, then reads the body.
       */
      @Override
      public ExchangeType exchangeType(RoutingContext routingContext) {
        return auth.open() ? ExchangeType.UNARY : ExchangeType.REQUEST_STREAMING;
      }
    };
  }

  static HttpResponse failure(Throwable error) {
    Throwable t = error;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof ApiException e) {
      // busy or unavailable store: tell the caller when to come back (whole seconds, as HTTP wants)
      return e.status() == 429 || e.status() == 503
          ? Json.error(e).mapHeaders(h -> h.toBuilder().set(HttpHeaderNames.RETRY_AFTER, "1").build())
          : Json.error(e);
    }
    if (t instanceof RequestTimeoutException) {
      return Json.error(RequestGuard.timeoutError(0)); // counted and logged by RequestGuard
    }
    if (t instanceof ContentTooLargeException) {
      return Json.error(JsonErrorHandler.forStatus(413, null, null));
    }
    if (t instanceof HttpStatusException e) {
      return Json.error(JsonErrorHandler.forStatus(e.httpStatus().code(), null, null));
    }
    if (t instanceof ResponseCompleteException || t instanceof ClosedStreamException) {
      // the client went away or the response was already sent: nobody is listening
      return Json.error(new ApiException(499, "client_closed", "the client closed the request", null));
    }
    if (t instanceof StoreException e) {
      return Json.error(new ApiException(503, "store_unavailable", e.getMessage(), null));
    }
    if (t instanceof ShuttingDownException) {
      // a request still running when shutdown.grace ran out: not a server fault, and worth a retry
      // elsewhere (a decision with a messageId is then answered once, counted once)
      return Json.error(new ApiException(503, "shutting_down", "the server is shutting down; retry on another node "
          + "or after the restart (with the same messageId, the decision is counted once)", null))
          .mapHeaders(h -> h.toBuilder().set(HttpHeaderNames.RETRY_AFTER, "1").build());
    }
    LOG.error("request failed", t);
    return Json.error(new ApiException(500, "internal", "internal error: " + t, null));
  }

  /**
   * The request's JSON body, read once and held to the shape limits as it is read; a body past one is
   * counted with the guard's refusals ({@code fcap_http_refused_total}).
   */
  private JsonNode body(AggregatedHttpRequest req) {
    return Json.parse(req.content().array(), limits, metrics::httpRefused);
  }

  // --- decisions ---------------------------------------------------------------------------------

  private CompletableFuture<HttpResponse> decide(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    JsonNode body = body(req);
    Message m = MessageReader.read(body, DECIDE_EXTRA);
    boolean dryRun = MessageReader.bool(body, "dryRun");
    return decisions.decide(who, m, dryRun).thenApply(d -> Json.ok(g -> Json.decision(g, d)));
  }

  private CompletableFuture<HttpResponse> batch(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    JsonNode body = body(req);
    if (!body.isObject()) {
      throw ApiException.badRequest("invalid_type", "expected {\"requests\": [...]}", null);
    }
    body.fieldNames().forEachRemaining(f -> {
      if (!f.equals("requests") && !f.equals("dryRun")) {
        throw ApiException.badRequest("unknown_field", "unknown field '" + f + "'; known fields: requests, dryRun", f);
      }
    });
    JsonNode items = body.get("requests");
    if (items == null) {
      throw ApiException.badRequest("missing_field", "requests is required: an array of messages", "requests");
    }
    if (!items.isArray()) {
      throw ApiException.badRequest("invalid_type", "requests must be an array of messages", "requests");
    }
    boolean dryRun = MessageReader.bool(body, "dryRun");
    // the body has arrived: from now on the batch gets its store time on top of http.requestTimeout,
    // so a batch slowed by load answers its items (decided, or busy), never a 408 after deciding them
    ctx.setRequestTimeout(com.linecorp.armeria.common.util.TimeoutMode.SET_FROM_NOW,
        decisions.storeTimeFor(items.size()).plusMillis(ctx.requestTimeoutMillis()));
    return decisions.decideBatch(who, items.size(), i -> MessageReader.read(items.get(i), Set.of()), dryRun)
        .thenApply(results -> Json.ok(g -> {
          g.writeStartObject();
          g.writeArrayFieldStart("results");
          for (DecisionService.Outcome r : results) {
            if (r.decision() != null) {
              Json.decision(g, r.decision());
            } else {
              g.writeStartObject();
              Json.writeErrorField(g, r.error());
              g.writeEndObject();
            }
          }
          g.writeEndArray();
          g.writeEndObject();
        }));
  }

  private CompletableFuture<HttpResponse> release(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    return decisions.release(who, ctx.pathParam("decisionId")).thenApply(r -> Json.ok(g -> {
      g.writeStartObject();
      g.writeBooleanField("released", r.released());
      if (r.reason() != null) {
        g.writeStringField("reason", r.reason());
      }
      g.writeEndObject();
    }));
  }

  /** Releases by message id: the body names the message as it was decided (tenant, recipient, messageId). */
  private CompletableFuture<HttpResponse> releaseMessage(ServiceRequestContext ctx, AggregatedHttpRequest req,
      Principal who) {
    Message m = MessageReader.read(body(req), Set.of());
    return decisions.releaseMessage(who, m).thenApply(released -> Json.ok(g -> {
      g.writeStartObject();
      g.writeBooleanField("released", released);
      g.writeEndObject();
    }));
  }

  // --- recipients --------------------------------------------------------------------------------

  private CompletableFuture<HttpResponse> inspect(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    String recipient = Messages.recipient(ctx.pathParam("recipient"));
    java.time.ZoneId zone = Messages.timeZone(ctx.queryParam("timeZone"));
    return decisions.inspect(who, tenant, recipient, zone).thenApply(r -> Json.ok(g ->
        Json.inspection(g, r.inspection(), r.degraded(), r.recentDenials())));
  }

  private CompletableFuture<HttpResponse> reset(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    String recipient = Messages.recipient(ctx.pathParam("recipient"));
    return decisions.reset(who, tenant, recipient, ctx.blockingTaskExecutor()).thenApply(held -> Json.ok(g -> {
      g.writeStartObject();
      g.writeBooleanField("reset", held);
      g.writeEndObject();
    }));
  }

  // --- suppression lists (their changes are forced to disk: off the event loop) --------------------

  private static final Set<String> SUPPRESSION_FIELDS = Set.of("channels", "categories", "reason", "expiresAt");

  private CompletableFuture<HttpResponse> putSuppression(ServiceRequestContext ctx, AggregatedHttpRequest req,
      Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    String recipient = Messages.recipient(ctx.pathParam("recipient"));
    JsonNode body = req.content().isEmpty() ? Json.MAPPER.createObjectNode() : body(req);
    if (!body.isObject()) {
      throw ApiException.badRequest("invalid_type", "expected an object: {channels, categories, reason, expiresAt}", null);
    }
    body.fieldNames().forEachRemaining(f -> {
      if (!SUPPRESSION_FIELDS.contains(f)) {
        throw ApiException.badRequest("unknown_field", "unknown field '" + f
            + "'; known fields: channels, categories, reason, expiresAt", f);
      }
    });
    List<String> channels = strings(body, "channels");
    List<String> categories = strings(body, "categories");
    JsonNode reason = body.path("reason");
    if (!reason.isMissingNode() && !reason.isNull() && !reason.isTextual()) {
      throw ApiException.badRequest("invalid_type", "reason must be a string", "reason");
    }
    JsonNode expires = body.path("expiresAt");
    if (!expires.isMissingNode() && !expires.isNull() && !expires.canConvertToExactIntegral()) {
      throw ApiException.badRequest("invalid_type", "expiresAt must be epoch milliseconds, or -1 for never",
          "expiresAt");
    }
    long expiresAt = expires.isMissingNode() || expires.isNull() ? -1 : expires.asLong();
    return CompletableFuture.supplyAsync(() -> decisions.suppressions().put(who, tenant, recipient, channels,
        categories, reason.isTextual() ? reason.asText() : null, expiresAt), ctx.blockingTaskExecutor())
        .thenApply(e -> Json.ok(g -> suppression(g, e)));
  }

  private CompletableFuture<HttpResponse> getSuppression(ServiceRequestContext ctx, AggregatedHttpRequest req,
      Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    String recipient = Messages.recipient(ctx.pathParam("recipient"));
    var entry = decisions.suppressions().get(who, tenant, recipient).orElseThrow(() -> new ApiException(404,
        "suppression_not_found", "tenant '" + tenant + "' does not suppress this recipient", "recipient"));
    return CompletableFuture.completedFuture(Json.ok(g -> suppression(g, entry)));
  }

  private CompletableFuture<HttpResponse> deleteSuppression(ServiceRequestContext ctx, AggregatedHttpRequest req,
      Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    String recipient = Messages.recipient(ctx.pathParam("recipient"));
    return CompletableFuture.supplyAsync(() -> decisions.suppressions().remove(who, tenant, recipient),
        ctx.blockingTaskExecutor()).thenApply(removed -> Json.ok(g -> {
          g.writeStartObject();
          g.writeBooleanField("removed", removed);
          g.writeEndObject();
        }));
  }

  private CompletableFuture<HttpResponse> listSuppressions(ServiceRequestContext ctx, AggregatedHttpRequest req,
      Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    String cursor = ctx.queryParam("cursor");
    String limitText = ctx.queryParam("limit");
    int limit;
    try {
      limit = limitText == null ? 100 : Integer.parseInt(limitText);
    } catch (NumberFormatException e) {
      throw ApiException.badRequest("invalid_field", "limit must be an integer between 1 and "
          + dev.fcap.server.decision.SuppressionService.MAX_PAGE, "limit");
    }
    var page = decisions.suppressions().page(who, tenant, cursor == null || cursor.isEmpty() ? null : cursor, limit);
    return CompletableFuture.completedFuture(Json.ok(g -> {
      g.writeStartObject();
      g.writeArrayFieldStart("items");
      for (var e : page) {
        suppression(g, e);
      }
      g.writeEndArray();
      if (page.size() == limit) { // maybe more: the next page starts after the last recipient listed
        g.writeStringField("nextCursor", page.get(page.size() - 1).recipient());
      }
      g.writeEndObject();
    }));
  }

  static List<String> strings(JsonNode body, String field) {
    JsonNode n = body.path(field);
    if (n.isMissingNode() || n.isNull()) {
      return List.of();
    }
    if (!n.isArray()) {
      throw ApiException.badRequest("invalid_type", field + " must be an array of strings (empty: every one)", field);
    }
    List<String> out = new ArrayList<>(n.size());
    for (JsonNode v : n) {
      if (!v.isTextual()) {
        throw ApiException.badRequest("invalid_type", field + " must be an array of strings", field);
      }
      out.add(v.asText());
    }
    return out;
  }

  private static void suppression(com.fasterxml.jackson.core.JsonGenerator g, dev.fcap.model.Suppression e)
      throws java.io.IOException {
    g.writeStartObject();
    g.writeStringField("recipient", e.recipient());
    g.writeArrayFieldStart("channels");
    for (String c : e.channels()) {
      g.writeString(c);
    }
    g.writeEndArray();
    g.writeArrayFieldStart("categories");
    for (String c : e.categories()) {
      g.writeString(c);
    }
    g.writeEndArray();
    g.writeStringField("reason", e.reason());
    g.writeStringField("addedBy", e.addedBy());
    g.writeNumberField("addedAt", e.addedAt());
    g.writeNumberField("expiresAt", e.expiresAt());
    g.writeEndObject();
  }

  // --- rules -------------------------------------------------------------------------------------

  private CompletableFuture<HttpResponse> getRules(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    who.require(Role.READ, tenant);
    Policy p = rules.policy(tenant);
    // a refused hand edit of the rules file is shown with the policy in force (docs/security.md)
    var tree = PolicyParser.toTree(p);
    rules.rejectedEdit(tenant, who.mayUse(ApiKey.ALL_TENANTS)).ifPresent(r -> tree.set("rejectedEdit", r));
    return CompletableFuture.completedFuture(policy(HttpStatus.OK, p, tree));
  }

  private CompletableFuture<HttpResponse> getRule(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    who.require(Role.READ, tenant);
    String id = ctx.pathParam("id");
    Policy p = rules.policy(tenant);
    var rule = p.rule(id).orElseThrow(() -> new ApiException(404, "rule_not_found", "tenant '" + tenant
        + "' has no rule '" + id + "'", "id"));
    byte[] body = Json.bytes(g -> Json.MAPPER.writeTree(g, PolicyParser.toTree(rule)));
    return CompletableFuture.completedFuture(HttpResponse.of(ResponseHeaders.builder(HttpStatus.OK)
        .contentType(MediaType.JSON_UTF_8).add(HttpHeaderNames.ETAG, etag(p)).build(),
        com.linecorp.armeria.common.HttpData.wrap(body)));
  }

  private CompletableFuture<HttpResponse> putRules(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    return ruleChange(ctx, req, true, who, HttpStatus.OK,
        (tenant, body, version) -> rules.replace(tenant, body, version, who.name()));
  }

  private CompletableFuture<HttpResponse> addRule(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    return ruleChange(ctx, req, true, who, HttpStatus.CREATED,
        (tenant, body, version) -> rules.add(tenant, body, version, who.name()));
  }

  private CompletableFuture<HttpResponse> putRule(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    return ruleChange(ctx, req, true, who, HttpStatus.OK,
        (tenant, body, version) -> rules.put(tenant, ctx.pathParam("id"), body, version, who.name()));
  }

  private CompletableFuture<HttpResponse> deleteRule(ServiceRequestContext ctx, AggregatedHttpRequest req,
      Principal who) {
    return ruleChange(ctx, req, false, who, HttpStatus.OK,
        (tenant, body, version) -> rules.delete(tenant, ctx.pathParam("id"), version, who.name()));
  }

  /** One change of a tenant's rules, given the parsed body (null for a delete) and the If-Match version. */
  @FunctionalInterface
  private interface RuleChangeOp {
    Policy apply(String tenant, JsonNode body, Long version);
  }

  /**
   * What every rule edit shares: the tenant, the admin role, the body and If-Match read on the event
   * loop, and the change itself off it, since persisting forces the rules file to disk.
   */
  private CompletableFuture<HttpResponse> ruleChange(ServiceRequestContext ctx, AggregatedHttpRequest req,
      boolean withBody, Principal who, HttpStatus status, RuleChangeOp change) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    who.require(Role.ADMIN, tenant);
    JsonNode body = withBody ? body(req) : null;
    Long version = ifMatch(req.headers());
    return CompletableFuture.supplyAsync(() -> policy(status, change.apply(tenant, body, version)),
        ctx.blockingTaskExecutor());
  }

  private CompletableFuture<HttpResponse> validate(ServiceRequestContext ctx, AggregatedHttpRequest req,
      Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    who.require(Role.READ, tenant);
    Policy p = rules.validate(tenant, body(req));
    return CompletableFuture.completedFuture(Json.ok(g -> {
      g.writeStartObject();
      g.writeBooleanField("valid", true);
      g.writeNumberField("rules", p.rules().size());
      g.writeEndObject();
    }));
  }

  private CompletableFuture<HttpResponse> history(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    String tenant = Messages.tenant(ctx.queryParam("tenant"));
    who.require(Role.READ, tenant);
    List<RuleChange> changes = rules.history(tenant);
    return CompletableFuture.completedFuture(Json.ok(g -> {
      g.writeStartObject();
      g.writeStringField("tenant", tenant);
      g.writeNumberField("version", rules.policy(tenant).version());
      g.writeArrayFieldStart("changes");
      for (RuleChange c : changes) {
        g.writeStartObject();
        g.writeNumberField("version", c.version());
        g.writeNumberField("time", c.time());
        g.writeStringField("who", c.who());
        g.writeStringField("action", c.action());
        if (c.ruleId() != null) {
          g.writeStringField("rule", c.ruleId());
        }
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    }));
  }

  private static HttpResponse policy(HttpStatus status, Policy p) {
    return policy(status, p, PolicyParser.toTree(p));
  }

  private static HttpResponse policy(HttpStatus status, Policy p, JsonNode tree) {
    byte[] body = Json.bytes(g -> Json.MAPPER.writeTree(g, tree));
    return HttpResponse.of(ResponseHeaders.builder(status).contentType(MediaType.JSON_UTF_8)
        .add(HttpHeaderNames.ETAG, etag(p)).build(), com.linecorp.armeria.common.HttpData.wrap(body));
  }

  private static String etag(Policy p) {
    return "\"" + p.version() + "\"";
  }

  /** The version in {@code If-Match} ({@code "3"}, {@code 3} or {@code W/"3"}); null if absent or {@code *}. */
  static Long ifMatch(RequestHeaders headers) {
    String v = headers.get(HttpHeaderNames.IF_MATCH);
    if (v == null || v.trim().equals("*")) {
      return null;
    }
    String digits = v.trim().replaceFirst("^W/", "").replace("\"", "");
    try {
      return Long.parseLong(digits);
    } catch (NumberFormatException e) {
      throw ApiException.badRequest("invalid_header", "If-Match must be a policy version such as \"3\" (the ETag "
          + "of GET /v1/rules), got " + v, "If-Match");
    }
  }

  // --- metrics -----------------------------------------------------------------------------------

  private CompletableFuture<HttpResponse> metrics(ServiceRequestContext ctx, AggregatedHttpRequest req, Principal who) {
    who.require(Role.READ);
    // a key of some tenants sees their series only (docs/security.md)
    String text = who.mayUse(ApiKey.ALL_TENANTS) ? metrics.scrape() : metrics.scrape(who::mayUse);
    return CompletableFuture.completedFuture(HttpResponse.of(HttpStatus.OK,
        MediaType.parse("text/plain; version=0.0.4; charset=utf-8"), text));
  }
}
