package dev.fcap.store.redis;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;

/**
 * A Redis Cluster: Lettuce routes each EVALSHA by the slot of its one key (the partition's hash
 * tag), follows MOVED and ASK up to the configured number of redirects, and refreshes its view of
 * the topology on redirects, reconnects and periodically. Scripts are loaded on every master.
 */
final class ClusterBackend extends LettuceBackend<RedisAdvancedClusterAsyncCommands<byte[], byte[]>> {
  private final StatefulRedisClusterConnection<byte[], byte[]> connection;

  ClusterBackend(RedisClusterClient client) {
    this(client, connect(client, () -> {
      StatefulRedisClusterConnection<byte[], byte[]> single = client.connect(ByteArrayCodec.INSTANCE);
      StatefulRedisClusterConnection<byte[], byte[]> batch = client.connect(ByteArrayCodec.INSTANCE);
      return new Connections<>(single, single.async(), batch, batch.async());
    }));
  }

  private ClusterBackend(RedisClusterClient client,
      Connections<RedisAdvancedClusterAsyncCommands<byte[], byte[]>> connections) {
    super(client, connections);
    this.connection = (StatefulRedisClusterConnection<byte[], byte[]>) connections.connection();
  }

  /** Not offered: WAIT would have to go to the node of each key (the builder refuses the setting). */
  @Override
  public java.util.concurrent.CompletionStage<Long> waitReplicas(boolean pipelined, int replicas, long timeoutMs) {
    throw new UnsupportedOperationException("replica acknowledgements are not offered on a cluster");
  }

  /**
   * For each master that owns slots, {@code base{n}} with the least {@code n} whose slot it owns, as
   * the client sees the topology now: a resharding may pick another key for a master, which is then
   * new (written, not a loss), while a key whose slot moves goes with its slot.
   */
  @Override
  public java.util.List<byte[]> keyPerMaster(String base) {
    java.util.Map<String, byte[]> keys = new java.util.LinkedHashMap<>();
    int masters = (int) connection.getPartitions().stream()
        .filter(n -> n.is(RedisClusterNode.NodeFlag.UPSTREAM) && !n.getSlots().isEmpty()).count();
    for (int n = 0; keys.size() < masters && n < 1 << 20; n++) {
      byte[] key = (base + "{" + n + "}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
      String node = nodeOf(key);
      if (!node.isEmpty()) {
        keys.putIfAbsent(node, key);
      }
    }
    return java.util.List.copyOf(keys.values());
  }

  @Override
  public String nodeOf(byte[] key) {
    RedisClusterNode node = connection.getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
    return node == null ? "" : node.getNodeId();
  }
}
