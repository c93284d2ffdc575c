package dev.fcap.cli;

import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.BatchReply;
import dev.fcap.server.grpc.v1.BatchRequest;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceStub;
import dev.fcap.server.grpc.v1.Message;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * {@code fcap bench --protocol grpc}: a {@code Decide} (or a {@code DecideBatch}) per request, its
 * reply counted from the decisions it carries.
 */
final class GrpcBenchSender implements BenchSender {
  private final FcapServiceStub stub;
  private final int batch;
  private final boolean dryRun;
  private final String tenant;
  private final int recipients;

  GrpcBenchSender(BenchCommand o) {
    var b = GrpcClients.builder(o.url).factory(BenchSender.factory(o.connections)).maxResponseLength(64L << 20)
        .responseTimeout(Duration.ofSeconds(30));
    if (o.apiKey != null) {
      b.addHeader("authorization", "Bearer " + o.apiKey);
    }
    this.stub = b.build(FcapServiceStub.class);
    this.batch = o.batch;
    this.dryRun = o.dryRun;
    this.tenant = o.tenant;
    this.recipients = o.recipients;
  }

  private Message message(SplittableRandom rnd) {
    return Message.newBuilder().setTenant(tenant).setRecipient(BenchSender.recipient(rnd, recipients))
        .setContent(BenchSender.content(rnd)).build();
  }

  @Override
  public void send(SplittableRandom rnd, Consumer<Reply> done) {
    if (batch == 1) {
      stub.decide(DecideRequest.newBuilder().setMessage(message(rnd)).setDryRun(dryRun).build(),
          observer(d -> new Reply(d.getAllowed() ? 1 : 0, d.getDegraded() ? 1 : 0, 0, null), done));
    } else {
      BatchRequest.Builder b = BatchRequest.newBuilder().setDryRun(dryRun);
      for (int i = 0; i < batch; i++) {
        b.addRequests(message(rnd));
      }
      stub.decideBatch(b.build(), observer((BatchReply r) -> {
        int allowed = 0;
        int degraded = 0;
        int refused = 0;
        for (var x : r.getResultsList()) {
          if (!x.hasDecision()) {
            refused++;
          } else {
            allowed += x.getDecision().getAllowed() ? 1 : 0;
            degraded += x.getDecision().getDegraded() ? 1 : 0;
          }
        }
        return new Reply(allowed, degraded, refused, null);
      }, done));
    }
  }

  private static <T> StreamObserver<T> observer(Function<T, Reply> read, Consumer<Reply> done) {
    return new StreamObserver<>() {
      private Reply value = Reply.failed("no reply");

      @Override
      public void onNext(T reply) {
        value = read.apply(reply);
      }

      @Override
      public void onError(Throwable t) {
        done.accept(Reply.failed(t.toString()));
      }

      @Override
      public void onCompleted() {
        done.accept(value);
      }
    };
  }
}
