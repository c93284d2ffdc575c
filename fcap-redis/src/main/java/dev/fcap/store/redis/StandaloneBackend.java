package dev.fcap.store.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * One master: a standalone Redis, or the master a Sentinel group names (Lettuce asks the sentinels
 * again on every reconnect, so a failover is followed). Two connections: one that flushes every
 * command (single decisions from many threads pipeline on it naturally) and one for batches.
 */
final class StandaloneBackend implements Backend {
  private final RedisClient client;
  private final StatefulRedisConnection<byte[], byte[]> connection;
  private final StatefulRedisConnection<byte[], byte[]> batch;
  private final RedisAsyncCommands<byte[], byte[]> commands;
  private final RedisAsyncCommands<byte[], byte[]> batchCommands;

  StandaloneBackend(RedisClient client, RedisURI uri) {
    this.client = client;
    try {
      this.connection = client.connect(ByteArrayCodec.INSTANCE, uri);
      this.batch = client.connect(ByteArrayCodec.INSTANCE, uri);
    } catch (RuntimeException e) {
      client.shutdown();
      throw e;
    }
    this.batch.setAutoFlushCommands(false);
    this.commands = connection.async();
    this.batchCommands = batch.async();
  }

  @Override
  public CompletionStage<List<Object>> evalsha(String sha, byte[] key, byte[] arg) {
    return commands.evalsha(sha, ScriptOutputType.MULTI, new byte[][] {key}, arg);
  }

  @Override
  public CompletionStage<List<Object>> eval(byte[] script, byte[] key, byte[] arg) {
    return commands.eval(script, ScriptOutputType.MULTI, new byte[][] {key}, arg);
  }

  @Override
  public synchronized void pipelined(Runnable work) {
    try {
      work.run();
    } finally {
      batch.flushCommands();
    }
  }

  @Override
  public CompletionStage<List<Object>> evalshaPipelined(String sha, byte[] key, byte[] arg) {
    return batchCommands.evalsha(sha, ScriptOutputType.MULTI, new byte[][] {key}, arg);
  }

  @Override
  public String nodeOf(byte[] key) {
    return "";
  }

  @Override
  public CompletionStage<Long> del(byte[] key) {
    return commands.del(key);
  }

  @Override
  public CompletionStage<String> scriptLoad(byte[] script) {
    return commands.scriptLoad(script);
  }

  @Override
  public CompletionStage<Long> time() {
    return commands.time().thenApply(StandaloneBackend::millis);
  }

  static long millis(List<byte[]> time) {
    long seconds = Long.parseLong(new String(time.get(0), java.nio.charset.StandardCharsets.US_ASCII));
    long micros = Long.parseLong(new String(time.get(1), java.nio.charset.StandardCharsets.US_ASCII));
    return seconds * 1000 + micros / 1000;
  }

  @Override
  public void close() {
    batch.close();
    connection.close();
    client.shutdown();
  }
}
