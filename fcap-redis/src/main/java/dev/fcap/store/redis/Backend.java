package dev.fcap.store.redis;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The few Redis operations the store needs, over one topology (standalone or Sentinel-managed
 * master, or a cluster). Calls never block; each returns a stage that fails with Lettuce's
 * exceptions, which {@link Failures} maps.
 */
interface Backend extends AutoCloseable {

  /** EVALSHA on the node that owns {@code key}, with {@code args} as ARGV. */
  CompletionStage<List<Object>> evalsha(String sha, byte[] key, byte[]... args);

  /** EVAL (loads the script on that node as a side effect); used after NOSCRIPT. */
  CompletionStage<List<Object>> eval(byte[] script, byte[] key, byte[]... args);

  /**
   * Runs {@code batch} with the connection's automatic flushing off and flushes once at the end, so
   * the commands it issues leave in as few writes as possible per node. Serialized with other batches.
   */
  void pipelined(Runnable batch);

  /** Issues {@code eval} calls of a batch; same as {@link #evalsha} but on the pipelining connection. */
  CompletionStage<List<Object>> evalshaPipelined(String sha, byte[] key, byte[]... args);

  /** The id of the node that owns {@code key} (for grouping a batch); "" when there is one node. */
  String nodeOf(byte[] key);

  /** SCRIPT LOAD on every master; completes with the SHA-1 digest. */
  CompletionStage<String> scriptLoad(byte[] script);

  /**
   * WAIT on the given connection (the pipelining one if {@code pipelined}): completes with how many
   * replicas acknowledged every write sent on it before. Standalone and Sentinel only.
   */
  CompletionStage<Long> waitReplicas(boolean pipelined, int replicas, long timeoutMs);

  /**
   * Keys named {@code base} with a hash tag each, one owned by every master (one key, {@code base}
   * itself, when there is one master), so that a check of them all reaches every master.
   */
  List<byte[]> keyPerMaster(String base);

  /** Redis TIME of some master, epoch ms. */
  CompletionStage<Long> time();

  @Override
  void close();
}
