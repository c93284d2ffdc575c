package dev.fcap.cli;

import com.linecorp.armeria.client.ClientFactory;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * What {@code fcap bench} sends: one request of {@code --batch} messages (HTTP or gRPC), to a
 * recipient drawn uniformly from {@code --recipients} ids with one of 20 contents, and its reply.
 */
interface BenchSender {

  /** Sends one request of {@code batch} messages; calls back with what came back. */
  void send(SplittableRandom rnd, Consumer<Reply> done);

  /**
   * What one request came back with: admitted, degraded (decided by the failure policy, not the
   * store) and refused items (a batch item with its own error); or the request's error.
   */
  record Reply(int allowed, int degraded, int itemErrors, String error) {
    static Reply failed(String error) {
      return new Reply(0, 0, 0, error);
    }
  }

  /** The sender of {@code --protocol}, or null if it names none. */
  static BenchSender of(BenchCommand options) {
    return switch (options.protocol) {
      case "grpc" -> new GrpcBenchSender(options);
      case "http" -> new HttpBenchSender(options);
      default -> null;
    };
  }

  /** The client's event loops: {@code --connections} per server. */
  static ClientFactory factory(int connections) {
    return ClientFactory.builder().maxNumEventLoopsPerEndpoint(connections).maxNumEventLoopsPerHttp1Endpoint(connections)
        .build();
  }

  static String recipient(SplittableRandom rnd, int recipients) {
    return "+86" + (13_000_000_000L + rnd.nextInt(recipients));
  }

  static String content(SplittableRandom rnd) {
    return "Your verification code is " + (1000 + rnd.nextInt(20));
  }
}
