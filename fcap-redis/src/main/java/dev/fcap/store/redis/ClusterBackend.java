package dev.fcap.store.redis;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A Redis Cluster: Lettuce routes each EVALSHA by the slot of its one key (the partition's hash
 * tag), follows MOVED and ASK up to the configured number of redirects, and refreshes its view of
 * the topology on redirects, reconnects and periodically. Scripts are loaded on every master.
 */
final class ClusterBackend implements Backend {
  private final RedisClusterClient client;
  private final StatefulRedisClusterConnection<byte[], byte[]> connection;
  private final StatefulRedisClusterConnection<byte[], byte[]> batch;
  private final RedisAdvancedClusterAsyncCommands<byte[], byte[]> commands;
  private final RedisAdvancedClusterAsyncCommands<byte[], byte[]> batchCommands;

  ClusterBackend(RedisClusterClient client) {
    this.client = client;
    try {
      this.connection = client.connect(ByteArrayCodec.INSTANCE);
      this.batch = client.connect(ByteArrayCodec.INSTANCE);
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
    RedisClusterNode node = connection.getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
    return node == null ? "" : node.getNodeId();
  }

  @Override
  public CompletionStage<Long> del(byte[] key) {
    return commands.del(key);
  }

  @Override
  public CompletionStage<String> scriptLoad(byte[] script) {
    // Lettuce's cluster SCRIPT LOAD runs on every upstream (master) node and answers the digest.
    return commands.scriptLoad(script);
  }

  @Override
  public CompletionStage<Long> time() {
    return commands.time().thenApply(StandaloneBackend::millis);
  }

  @Override
  public void close() {
    batch.close();
    connection.close();
    client.shutdown();
  }
}
