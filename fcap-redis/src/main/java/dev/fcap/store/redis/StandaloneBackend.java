package dev.fcap.store.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;

/**
 * One master: a standalone Redis, or the master a Sentinel group names (Lettuce asks the sentinels
 * again on every reconnect, so a failover is followed). Two connections: one that flushes every
 * command (single decisions from many threads pipeline on it naturally) and one for batches.
 */
final class StandaloneBackend extends LettuceBackend<RedisAsyncCommands<byte[], byte[]>> {

  StandaloneBackend(RedisClient client, RedisURI uri) {
    super(client, connect(client, () -> {
      StatefulRedisConnection<byte[], byte[]> single = client.connect(ByteArrayCodec.INSTANCE, uri);
      StatefulRedisConnection<byte[], byte[]> batch = client.connect(ByteArrayCodec.INSTANCE, uri);
      return new Connections<>(single, single.async(), batch, batch.async());
    }));
  }

  @Override
  public String nodeOf(byte[] key) {
    return "";
  }

  @Override
  public java.util.List<byte[]> keyPerMaster(String base) {
    return java.util.List.of(base.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  @Override
  public java.util.concurrent.CompletionStage<Long> waitReplicas(boolean pipelined, int replicas, long timeoutMs) {
    return commands(pipelined).waitForReplication(replicas, timeoutMs);
  }
}
