package dev.fcap.server.grpc;

import dev.fcap.server.guard.ApiException;
import dev.fcap.server.guard.InputLimits;
import dev.fcap.server.grpc.v1.BatchRequest;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.Message;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Map;

/**
 * The gRPC side of the body shape limits ({@link InputLimits}, the HTTP side is {@code BodyShape}):
 * attributes per message, attribute name and id lengths. A request over a limit is closed with
 * {@code INVALID_ARGUMENT} naming the field before {@link GrpcApi} builds a message from it. (Nesting
 * needs no check: the protobuf schema is flat.)
 */
public final class GrpcShapeCheck implements ServerInterceptor {
  private final InputLimits limits;

  public GrpcShapeCheck(InputLimits limits) {
    this.limits = limits;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    ServerCall.Listener<Q> delegate = next.startCall(call, headers);
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
      private boolean refused;

      @Override
      public void onMessage(Q message) {
        try {
          check(message);
        } catch (ApiException e) {
          refused = true;
          call.close(GrpcApi.status(e), new Metadata());
          return;
        }
        super.onMessage(message);
      }

      @Override
      public void onHalfClose() {
        if (!refused) {
          super.onHalfClose();
        }
      }
    };
  }

  private void check(Object request) {
    if (request instanceof DecideRequest d) {
      check(d.getMessage(), "");
    } else if (request instanceof BatchRequest b) {
      for (int i = 0; i < b.getRequestsCount(); i++) {
        check(b.getRequests(i), "requests[" + i + "].");
      }
    }
  }

  private void check(Message m, String at) {
    id(at, "recipient", m.getRecipient());
    id(at, "channel", m.getChannel());
    id(at, "sender", m.getSender());
    id(at, "category", m.getCategory());
    id(at, "contentKey", m.getContentKey());
    if (m.getAttributesCount() > limits.maxAttributes()) {
      throw new ApiException(400, "too_many_attributes", "a message carries at most " + limits.maxAttributes()
          + " attributes (limits.maxAttributes)", at + "attributes");
    }
    for (Map.Entry<String, String> e : m.getAttributesMap().entrySet()) {
      if (e.getKey().length() > limits.maxAttributeNameLength()) {
        throw new ApiException(400, "too_long", "attribute names are at most " + limits.maxAttributeNameLength()
            + " characters (limits.maxAttributeNameLength)", at + "attributes");
      }
      id(at + "attributes.", e.getKey(), e.getValue());
    }
  }

  private void id(String at, String field, String value) {
    if (value.length() > limits.maxValueLength()) {
      throw new ApiException(400, "too_long", field + " is longer than " + limits.maxValueLength()
          + " characters (limits.maxValueLength)", at + field);
    }
  }
}
