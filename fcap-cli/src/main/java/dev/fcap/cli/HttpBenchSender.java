package dev.fcap.cli;

import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * {@code fcap bench --protocol http}: a decision (or a batch, or {@code GET /health} for the
 * baseline) per request, its reply counted from the JSON body without parsing it.
 */
final class HttpBenchSender implements BenchSender {
  private final WebClient client;
  private final String path;
  private final int batch;
  private final boolean baseline;
  private final boolean dryRun;
  private final String apiKey;
  private final String tenant;
  private final int recipients;

  HttpBenchSender(BenchCommand o) {
    this.client = WebClient.builder(o.url).factory(BenchSender.factory(o.connections)).maxResponseLength(64L << 20)
        .responseTimeout(Duration.ofSeconds(30)).build();
    this.path = o.batch == 1 ? "/v1/decisions" : "/v1/decisions/batch";
    this.batch = o.batch;
    this.baseline = o.baseline;
    this.dryRun = o.dryRun;
    this.apiKey = o.apiKey;
    this.tenant = o.tenant;
    this.recipients = o.recipients;
  }

  @Override
  public void send(SplittableRandom rnd, Consumer<Reply> done) {
    if (baseline) {
      client.get("/health").aggregate().whenComplete((res, error) -> done.accept(
          error != null ? Reply.failed(error.toString()) : res.status().code() != 200
              ? Reply.failed("HTTP " + res.status().code()) : new Reply(1, 0, 0, null)));
      return;
    }
    StringBuilder b = new StringBuilder(batch * 96);
    if (batch == 1) {
      message(b, rnd, dryRun);
    } else {
      b.append("{\"dryRun\":").append(dryRun).append(",\"requests\":[");
      for (int i = 0; i < batch; i++) {
        if (i > 0) {
          b.append(',');
        }
        message(b, rnd, false);
      }
      b.append("]}");
    }
    var h = RequestHeaders.builder(HttpMethod.POST, path).contentType(MediaType.JSON_UTF_8);
    if (apiKey != null) {
      h.add("authorization", "Bearer " + apiKey);
    }
    CompletableFuture<AggregatedHttpResponse> f = client.execute(HttpRequest.of(h.build(),
        HttpData.ofUtf8(b.toString()))).aggregate();
    f.whenComplete((res, error) -> {
      if (error != null) {
        done.accept(Reply.failed(error.toString()));
        return;
      }
      String body = res.contentUtf8();
      if (res.status().code() != 200) {
        done.accept(Reply.failed("HTTP " + res.status().code() + " " + body.substring(0, Math.min(200,
            body.length()))));
        return;
      }
      // a decision object starts with "allowed"; a rule outcome starts with "id"; a refused item is an error
      done.accept(new Reply(count(body, "{\"allowed\":true"), count(body, "\"degraded\":true"),
          count(body, "{\"error\":"), null));
    });
  }

  private void message(StringBuilder b, SplittableRandom rnd, boolean dry) {
    b.append("{\"tenant\":\"").append(tenant).append("\",\"recipient\":\"")
        .append(BenchSender.recipient(rnd, recipients)).append("\",\"content\":\"").append(BenchSender.content(rnd))
        .append('"');
    if (dry) {
      b.append(",\"dryRun\":true");
    }
    b.append('}');
  }

  private static int count(String s, String what) {
    int n = 0;
    for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + what.length())) {
      n++;
    }
    return n;
  }
}
