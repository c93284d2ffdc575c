package dev.fcap.server;

import dev.fcap.server.auth.ApiKey;
import dev.fcap.server.failure.FailurePolicy;
import dev.fcap.server.guard.Safeguards;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything the server is configured with; read by {@link ConfigLoader} from defaults, {@code fcap.yaml},
 * environment variables and command-line flags (later ones win). docs/server.md lists every key.
 *
 * @param storeUri {@code memory}, {@code redis://...}, {@code redis-sentinel://...} or {@code redis-cluster://...}
 *     (the Redis ones through fcap-server-redis)
 * @param rulesSource where the rules live: a YAML file path (or {@code file:PATH})
 * @param rulesSeed copied to a file rules source that does not exist yet; {@code builtin} is the seed policy
 *     shipped in the jar (examples/rules.yaml)
 * @param auditSink {@code none} or {@code file:PATH} (JSON lines)
 * @param storeDurability where and how durably the embedded store keeps its state ({@code store.dir},
 *     {@code store.fsync}); null when {@code store.fsync} is {@code off} (memory only). Ignored by the
 *     Redis stores.
 * @param recentDenialsFile where the recent denials are saved at a graceful stop (and rewritten by a reset that
 *     erases a saved recipient), and read at the start: {@code recent-denials.json} beside the rules file, or in
 *     {@code dataDir} when the rules live in Redis; null keeps them in memory only
 * @param safeguards Host and Origin checks, request timeout, body shape, metric label bounds, rules settle time
 */
public record ServerConfig(
    String listenHost,
    int listenPort,
    String storeUri,
    long storeMaxBytes,
    dev.fcap.store.memory.Durability storeDurability,
    String rulesSource,
    String rulesSeed,
    int rulesHistory,
    List<ApiKey> apiKeys,
    String auditSink,
    double auditSampleAdmissions,
    int auditQueue,
    long auditMaxFileBytes,
    int auditMaxFiles,
    int recentDenials,
    int recentRecipients,
    Path recentDenialsFile,
    FailurePolicy failure,
    long maxBodyBytes,
    int maxBatch,
    Duration shutdownGrace,
    Safeguards safeguards,
    Duration releaseHorizon) {

  public ServerConfig {
    apiKeys = List.copyOf(apiKeys);
  }

  public ServerConfig withListen(String host, int port) {
    return new ServerConfig(host, port, storeUri, storeMaxBytes, storeDurability, rulesSource, rulesSeed, rulesHistory, apiKeys,
        auditSink, auditSampleAdmissions, auditQueue, auditMaxFileBytes, auditMaxFiles, recentDenials,
        recentRecipients, recentDenialsFile, failure, maxBodyBytes, maxBatch, shutdownGrace, safeguards, releaseHorizon);
  }

  public boolean loopbackOnly() {
    return apiKeys.isEmpty();
  }
}
