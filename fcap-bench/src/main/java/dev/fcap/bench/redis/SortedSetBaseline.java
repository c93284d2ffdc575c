package dev.fcap.bench.redis;

import dev.fcap.engine.Fingerprint;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The published sorted-set design: one sorted set per rule and
 * recipient (and content), one EVALSHA per rule ({@code sorted-set-rule.lua}: TIME, ZREMRANGEBYSCORE,
 * ZCOUNT, ZADD if under the limit, PEXPIRE), so 4 calls per decision for the seed policy. Each rule
 * is decided on its own (that design has no all-or-nothing).
 */
final class SortedSetBaseline implements AutoCloseable {
  /** A rule of the baseline: key suffix, limit, window, and whether the content is part of the key. */
  record BaselineRule(String suffix, long limit, long windowMs, boolean content) {}

  static final List<BaselineRule> SEED = List.of(
      new BaselineRule("m", 15, 60_000, false),
      new BaselineRule("d", 50, 86_400_000, false),
      new BaselineRule("c59s", 2, 59_000, true),
      new BaselineRule("c59m", 5, 3_540_000, true));

  static final List<BaselineRule> RECIPIENT_ONLY = SEED.subList(0, 2);

  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisAsyncCommands<String, String> commands;
  private final String sha;
  private final AtomicLong sequence = new AtomicLong();

  SortedSetBaseline(String uri, boolean autoFlush) {
    client = RedisClient.create(RedisURI.create(uri));
    connection = client.connect(StringCodec.UTF8);
    sha = connection.sync().scriptLoad(script());
    connection.setAutoFlushCommands(autoFlush);
    commands = connection.async();
  }

  private static String script() {
    try (InputStream in = SortedSetBaseline.class.getResourceAsStream("sorted-set-rule.lua")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Issues one decision (one call per rule) without waiting; {@code time} null = Redis TIME. */
  List<CompletableFuture<Long>> issue(String recipient, String content, List<BaselineRule> rules, Long time) {
    String hash = content == null ? "" : Fingerprint.hex(Fingerprint.ofContent(content)).substring(0, 16);
    List<CompletableFuture<Long>> calls = new ArrayList<>(rules.size());
    String now = time == null ? "" : Long.toString(time);
    for (BaselineRule r : rules) {
      String key = "bl:{" + recipient + "}:" + r.suffix() + (r.content() ? ":" + hash : "");
      calls.add(commands.<Long>evalsha(sha, ScriptOutputType.INTEGER, new String[] {key},
          Long.toString(r.windowMs()), Long.toString(r.limit()), now, Long.toString(sequence.incrementAndGet()))
          .toCompletableFuture());
    }
    return calls;
  }

  /** One decision, one round trip per rule, each waited for (the unpipelined published client). */
  boolean decideSequentially(String recipient, String content, List<BaselineRule> rules) {
    boolean allowed = true;
    for (BaselineRule r : rules) {
      allowed &= issue(recipient, content, List.of(r), null).get(0).join() == 1L;
    }
    return allowed;
  }

  void flush() {
    connection.flushCommands();
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }
}
