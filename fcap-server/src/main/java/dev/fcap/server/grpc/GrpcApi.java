package dev.fcap.server.grpc;

import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.fcap.engine.CounterView;
import dev.fcap.model.Defer;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyParser;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.decision.DecisionService;
import dev.fcap.server.guard.Messages;
import dev.fcap.server.admin.RulesAdmin;
import dev.fcap.server.audit.RecentDenials;
import dev.fcap.server.auth.Authenticator;
import dev.fcap.server.auth.Principal;
import dev.fcap.server.auth.Role;
import dev.fcap.server.grpc.v1.BatchItem;
import dev.fcap.server.grpc.v1.BatchReply;
import dev.fcap.server.grpc.v1.BatchRequest;
import dev.fcap.server.grpc.v1.Counter;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.Decision;
import dev.fcap.server.grpc.v1.Denial;
import dev.fcap.server.grpc.v1.Error;
import dev.fcap.server.grpc.v1.FcapServiceGrpc;
import dev.fcap.server.grpc.v1.Inspection;
import dev.fcap.server.grpc.v1.RecipientRequest;
import dev.fcap.server.grpc.v1.ReleaseReply;
import dev.fcap.server.grpc.v1.ReleaseRequest;
import dev.fcap.server.grpc.v1.ResetReply;
import dev.fcap.server.grpc.v1.RuleOutcome;
import dev.fcap.server.grpc.v1.RulesReply;
import dev.fcap.server.grpc.v1.RulesRequest;
import dev.fcap.server.grpc.v1.SuppressionEntry;
import dev.fcap.server.grpc.v1.SuppressionRemoved;
import dev.fcap.server.grpc.v1.SuppressionRequest;
import dev.fcap.server.grpc.v1.Values;
import dev.fcap.server.grpc.v1.Window;
import dev.fcap.store.StoreException;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * The gRPC API ({@code fcap/v1/fcap.proto}), served by Armeria on the HTTP port. Same validation,
 * keys and semantics as the HTTP API: the key comes from the {@code authorization: Bearer ...} or
 * {@code x-api-key} metadata, and {@link ApiException}s map to gRPC statuses (400 to
 * INVALID_ARGUMENT, 401 to UNAUTHENTICATED, 403 to PERMISSION_DENIED, 429 to RESOURCE_EXHAUSTED, 503 to
 * UNAVAILABLE), the description being {@code code: message (field)}; a busy or unavailable store adds
 * the trailer {@code retry-after-ms}. Role checks and batch assembly are the {@link DecisionService}'s.
 */
public final class GrpcApi extends FcapServiceGrpc.FcapServiceImplBase {
  static final io.grpc.Metadata.Key<String> RETRY_AFTER_MS =
      io.grpc.Metadata.Key.of("retry-after-ms", io.grpc.Metadata.ASCII_STRING_MARSHALLER);
  private final DecisionService decisions;
  private final RulesAdmin rules;
  private final Authenticator auth;

  public GrpcApi(DecisionService decisions, RulesAdmin rules, Authenticator auth) {
    this.decisions = decisions;
    this.rules = rules;
    this.auth = auth;
  }

  @Override
  public void decide(DecideRequest request, StreamObserver<Decision> out) {
    run(out, () -> {
      Principal who = principal();
      return decisions.decide(who, message(request.getMessage()), request.getDryRun()).thenApply(GrpcApi::decision);
    });
  }

  @Override
  public void decideBatch(BatchRequest request, StreamObserver<BatchReply> out) {
    run(out, () -> {
      Principal who = principal();
      return decisions.decideBatch(who, request.getRequestsCount(), i -> message(request.getRequests(i)),
          request.getDryRun()).thenApply(results -> {
        BatchReply.Builder reply = BatchReply.newBuilder();
        for (DecisionService.Outcome r : results) {
          ApiException e = r.error();
          reply.addResults(e == null ? BatchItem.newBuilder().setDecision(decision(r.decision())).build()
              : BatchItem.newBuilder().setError(Error.newBuilder().setCode(e.code()).setMessage(e.getMessage())
                  .setField(e.field() == null ? "" : e.field())).build());
        }
        return reply.build();
      });
    });
  }

  @Override
  public void release(ReleaseRequest request, StreamObserver<ReleaseReply> out) {
    run(out, () -> {
      Principal who = principal();
      if (request.hasMessage()) {
        return decisions.releaseMessage(who, message(request.getMessage()))
            .thenApply(r -> ReleaseReply.newBuilder().setReleased(r).build());
      }
      return decisions.release(who, request.getDecisionId()).thenApply(r -> {
        ReleaseReply.Builder reply = ReleaseReply.newBuilder().setReleased(r.released());
        if (r.reason() != null) {
          reply.setReason(r.reason());
        }
        return reply.build();
      });
    });
  }

  @Override
  public void inspect(RecipientRequest request, StreamObserver<Inspection> out) {
    run(out, () -> {
      Principal who = principal();
      String tenant = Messages.tenant(request.hasTenant() ? request.getTenant() : null);
      String recipient = Messages.recipient(request.getRecipient());
      java.time.ZoneId zone = Messages.timeZone(request.hasTimeZone() ? request.getTimeZone() : null);
      return decisions.inspect(who, tenant, recipient, zone).thenApply(r -> inspection(r.inspection(), r.degraded(),
          r.recentDenials()));
    });
  }

  @Override
  public void reset(RecipientRequest request, StreamObserver<ResetReply> out) {
    run(out, () -> {
      Principal who = principal();
      String tenant = Messages.tenant(request.hasTenant() ? request.getTenant() : null);
      String recipient = Messages.recipient(request.getRecipient());
      return decisions.reset(who, tenant, recipient, ServiceRequestContext.current().blockingTaskExecutor())
          .thenApply(r -> ResetReply.newBuilder().setReset(r).build());
    });
  }

  @Override
  public void getRules(RulesRequest request, StreamObserver<RulesReply> out) {
    run(out, () -> {
      Principal who = principal();
      String tenant = Messages.tenant(request.hasTenant() ? request.getTenant() : null);
      who.require(Role.READ, tenant);
      Policy p = rules.policy(tenant);
      return CompletableFuture.completedFuture(RulesReply.newBuilder().setTenant(tenant).setVersion(p.version())
          .setPolicyJson(PolicyParser.toTree(p).toString()).build());
    });
  }

  @Override
  public void putSuppression(SuppressionRequest request, StreamObserver<SuppressionEntry> out) {
    run(out, () -> {
      Principal who = principal();
      String tenant = Messages.tenant(request.hasTenant() ? request.getTenant() : null);
      String recipient = Messages.recipient(request.getRecipient());
      // forced to disk before it answers: off the event loop
      String reason = request.hasReason() ? request.getReason() : null;
      long expiresAt = request.hasExpiresAt() ? request.getExpiresAt() : -1;
      return CompletableFuture.supplyAsync(() -> entry(decisions.suppressions().put(who, tenant, recipient,
          request.getChannelsList(), request.getCategoriesList(), reason, expiresAt)),
          ServiceRequestContext.current().blockingTaskExecutor());
    });
  }

  @Override
  public void getSuppression(RecipientRequest request, StreamObserver<SuppressionEntry> out) {
    run(out, () -> {
      Principal who = principal();
      String tenant = Messages.tenant(request.hasTenant() ? request.getTenant() : null);
      String recipient = Messages.recipient(request.getRecipient());
      return CompletableFuture.completedFuture(entry(decisions.suppressions().get(who, tenant, recipient)
          .orElseThrow(() -> new ApiException(404, "suppression_not_found", "tenant '" + tenant
              + "' does not suppress this recipient", "recipient"))));
    });
  }

  @Override
  public void deleteSuppression(RecipientRequest request, StreamObserver<SuppressionRemoved> out) {
    run(out, () -> {
      Principal who = principal();
      String tenant = Messages.tenant(request.hasTenant() ? request.getTenant() : null);
      String recipient = Messages.recipient(request.getRecipient());
      return CompletableFuture.supplyAsync(() -> SuppressionRemoved.newBuilder()
          .setRemoved(decisions.suppressions().remove(who, tenant, recipient)).build(),
          ServiceRequestContext.current().blockingTaskExecutor());
    });
  }

  private static SuppressionEntry entry(dev.fcap.model.Suppression e) {
    return SuppressionEntry.newBuilder().setRecipient(e.recipient()).addAllChannels(e.channels())
        .addAllCategories(e.categories()).setReason(e.reason()).setAddedBy(e.addedBy()).setAddedAt(e.addedAt())
        .setExpiresAt(e.expiresAt()).build();
  }

  // ---------------------------------------------------------------------------------------------

  private Principal principal() {
    RequestHeaders h = ServiceRequestContext.current().request().headers();
    return auth.authenticate(h.get(HttpHeaderNames.AUTHORIZATION), h.get("x-api-key"));
  }

  private static Message message(dev.fcap.server.grpc.v1.Message m) {
    long cost = m.hasCost() ? m.getCost() : 1;
    if (cost < 1 || cost > Message.MAX_COST) {
      throw ApiException.badRequest("invalid_field", "cost must be between 1 and " + Message.MAX_COST + ", got "
          + cost, "cost");
    }
    Message message = Messages.of(m.hasTenant() ? m.getTenant() : null, m.getRecipient(),
        m.hasChannel() ? m.getChannel() : null, m.hasSender() ? m.getSender() : null,
        m.hasCategory() ? m.getCategory() : null,
        m.hasContent() ? m.getContent() : null, m.hasContentKey() ? m.getContentKey() : null, m.getAttributesMap(),
        cost, m.hasMessageId() ? m.getMessageId() : null, m.hasTimeZone() ? Messages.timeZone(m.getTimeZone()) : null,
        m.hasPriority() ? Messages.priority(m.getPriority()) : null, m.getOverride());
    Defer defer = defer(m);
    return defer == null ? message : message.withDefer(defer);
  }

  /**
   * The message's deferral (null: none). A latest instant without {@code defer}, or a negative one, is
   * a 400 naming {@code notAfter} (the HTTP field's name), as over HTTP; whether the store and rules can
   * book it is the {@link DecisionService}'s to say.
   */
  private static Defer defer(dev.fcap.server.grpc.v1.Message m) {
    long notAfter = m.getNotAfterMs();
    if (!m.getDefer()) {
      if (notAfter != 0) {
        throw ApiException.badRequest("invalid_field", "notAfter is set without defer: set defer to book the message "
            + "for later, or leave notAfter out", "notAfter");
      }
      return null;
    }
    if (notAfter < 0) {
      throw ApiException.badRequest("invalid_field", "notAfter must be an instant after 1970 (epoch ms), got "
          + notAfter, "notAfter");
    }
    return new Defer(notAfter);
  }

  private static Decision decision(dev.fcap.model.Decision d) {
    Decision.Builder b = Decision.newBuilder().setAllowed(d.allowed()).setDecisionId(d.decisionId())
        .setRetryAfterMs(d.retryAfterMs()).setDegraded(d.degraded()).setPolicyVersion(d.policyVersion())
        .setTime(d.time()).setReplayed(d.replayed()).setDeferred(d.deferred());
    if (!d.allowed()) {
      b.setSendAt(d.sendAt());
    }
    if (d.degradedReason() != null) {
      b.setDegradedReason(d.degradedReason());
    }
    if (d.suppressedReason() != null) {
      b.setSuppressedReason(d.suppressedReason());
    }
    // addAll on an empty list still allocates the repeated field; most decisions block nothing
    if (!d.blockedBy().isEmpty()) {
      b.addAllBlockedBy(d.blockedBy());
    }
    if (!d.shadowBlockedBy().isEmpty()) {
      b.addAllShadowBlockedBy(d.shadowBlockedBy());
    }
    for (dev.fcap.model.RuleOutcome r : d.rules()) {
      RuleOutcome.Builder rb = RuleOutcome.newBuilder().setId(r.id()).setLimit(r.limit()).setWindowMs(r.windowMs())
          .setUsed(r.used()).setRemaining(r.remaining()).setAllowed(r.allowed()).setEnforced(r.enforced())
          .setRetryAfterMs(r.retryAfterMs());
      if (!r.allowed()) {
        rb.setSendAt(r.sendAt());
      }
      if (r.bound() != r.limit()) {
        rb.setBound(r.bound());
      }
      b.addRules(rb);
    }
    return b.build();
  }

  private static Inspection inspection(dev.fcap.engine.Inspection i, boolean degraded,
      List<RecentDenials.Denial> denials) {
    Inspection.Builder b = Inspection.newBuilder().setTenant(i.tenant()).setRecipient(i.recipient()).setTime(i.time())
        .setPolicyVersion(i.policyVersion()).setDegraded(degraded);
    for (CounterView c : i.counters()) {
      b.addCounters(Counter.newBuilder().setRuleId(c.ruleId()).setLimit(c.limit()).setWindowMs(c.windowMs())
          .setEnforced(c.enforced()).putAllValues(c.values()).setUsed(c.used()).setRemaining(c.remaining())
          .setFreesInMs(c.freesInMs()));
    }
    b.setTimeZone(i.timeZone().getId());
    for (dev.fcap.engine.WindowView w : i.windows()) {
      b.addWindows(Window.newBuilder().setRuleId(w.ruleId()).setEnforced(w.enforced()).setZone(w.zone().getId())
          .setOpen(w.open()).setOpensAt(w.opensAt()).putAllMatch(condition(w.match()))
          .putAllExempt(condition(w.exempt())));
    }
    for (RecentDenials.Denial d : denials) {
      Denial.Builder db = Denial.newBuilder().setDecisionId(d.decisionId()).setTime(d.time())
          .addAllBlockedBy(d.blockedBy());
      if (d.channel() != null) {
        db.setChannel(d.channel());
      }
      if (d.category() != null) {
        db.setCategory(d.category());
      }
      b.addRecentDenials(db);
    }
    return b.build();
  }

  private static java.util.Map<String, Values> condition(dev.fcap.model.Condition c) {
    java.util.Map<String, Values> m = new java.util.LinkedHashMap<>();
    c.values().forEach((d, v) -> m.put(d.toString(), Values.newBuilder().addAllValues(v).build()));
    return m;
  }

  /** Runs a call: its future's value is the reply; its failure the mapped status. */
  private static <T> void run(StreamObserver<T> out, java.util.function.Supplier<CompletableFuture<T>> call) {
    CompletableFuture<T> f;
    try {
      f = call.get();
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    f.whenComplete((reply, error) -> {
      if (error == null) {
        out.onNext(reply);
        out.onCompleted();
      } else {
        Status status = status(error);
        io.grpc.Metadata trailers = new io.grpc.Metadata();
        if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED || status.getCode() == Status.Code.UNAVAILABLE) {
          trailers.put(RETRY_AFTER_MS, "1000");
        }
        out.onError(status.asRuntimeException(trailers));
      }
    });
  }

  static Status status(Throwable error) {
    Throwable t = error;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof ApiException e) {
      Function<Integer, Status> map = s -> switch (s) {
        case 401 -> Status.UNAUTHENTICATED;
        case 403 -> Status.PERMISSION_DENIED;
        case 404 -> Status.NOT_FOUND;
        case 409 -> Status.ALREADY_EXISTS;
        case 412 -> Status.FAILED_PRECONDITION;
        case 429 -> Status.RESOURCE_EXHAUSTED;
        case 501 -> Status.UNIMPLEMENTED;
        case 503 -> Status.UNAVAILABLE;
        default -> s >= 500 ? Status.INTERNAL : Status.INVALID_ARGUMENT;
      };
      return map.apply(e.status()).withDescription(e.code() + ": " + e.getMessage()
          + (e.field() == null ? "" : " (field " + e.field() + ")"));
    }
    if (t instanceof StoreException e) {
      return Status.UNAVAILABLE.withDescription("store_unavailable: " + e.getMessage());
    }
    return Status.INTERNAL.withDescription("internal: " + t);
  }
}
