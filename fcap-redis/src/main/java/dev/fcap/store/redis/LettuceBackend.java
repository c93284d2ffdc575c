package dev.fcap.store.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.api.async.RedisServerAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * What both topologies share: two connections, one that flushes every command (single decisions
 * from many threads pipeline on it naturally) and one with automatic flushing off for batches, and
 * the same commands on either. Subclasses only say how to connect and which node owns a key.
 *
 * @param <C> Lettuce's async command interface of the topology
 */
abstract class LettuceBackend<C extends RedisScriptingAsyncCommands<byte[], byte[]>
        & RedisKeyAsyncCommands<byte[], byte[]> & RedisServerAsyncCommands<byte[], byte[]>>
    implements Backend {

  /** A topology's two connections and their commands. */
  record Connections<C>(StatefulConnection<byte[], byte[]> connection, C commands,
      StatefulConnection<byte[], byte[]> batch, C batchCommands) {}

  private final AbstractRedisClient client;
  private final StatefulConnection<byte[], byte[]> connection;
  private final StatefulConnection<byte[], byte[]> batch;
  private final C commands;
  private final C batchCommands;

  LettuceBackend(AbstractRedisClient client, Connections<C> connections) {
    this.client = client;
    this.connection = connections.connection();
    this.batch = connections.batch();
    this.commands = connections.commands();
    this.batchCommands = connections.batchCommands();
    this.batch.setAutoFlushCommands(false);
  }

  /** Opens both connections; shuts the client down if either fails, so nothing leaks. */
  static <C> Connections<C> connect(AbstractRedisClient client, java.util.function.Supplier<Connections<C>> open) {
    try {
      return open.get();
    } catch (RuntimeException e) {
      RedisUris.shutdown(client);
      throw e;
    }
  }

  @Override
  public CompletionStage<List<Object>> evalsha(String sha, byte[] key, byte[]... args) {
    return commands.evalsha(sha, ScriptOutputType.MULTI, new byte[][] {key}, args);
  }

  @Override
  public CompletionStage<List<Object>> eval(byte[] script, byte[] key, byte[]... args) {
    return commands.eval(script, ScriptOutputType.MULTI, new byte[][] {key}, args);
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
  public CompletionStage<List<Object>> evalshaPipelined(String sha, byte[] key, byte[]... args) {
    return batchCommands.evalsha(sha, ScriptOutputType.MULTI, new byte[][] {key}, args);
  }

  /** The commands of one connection: the pipelining one if {@code pipelined}. */
  protected C commands(boolean pipelined) {
    return pipelined ? batchCommands : commands;
  }

  @Override
  public CompletionStage<String> scriptLoad(byte[] script) {
    // on a cluster, Lettuce runs SCRIPT LOAD on every upstream (master) node and answers the digest
    return commands.scriptLoad(script);
  }

  @Override
  public CompletionStage<Long> time() {
    return commands.time().thenApply(LettuceBackend::millis);
  }

  static long millis(List<byte[]> time) {
    long seconds = Long.parseLong(new String(time.get(0), StandardCharsets.US_ASCII));
    long micros = Long.parseLong(new String(time.get(1), StandardCharsets.US_ASCII));
    return seconds * 1000 + micros / 1000;
  }

  @Override
  public void close() {
    batch.close();
    connection.close();
    RedisUris.shutdown(client);
  }
}
