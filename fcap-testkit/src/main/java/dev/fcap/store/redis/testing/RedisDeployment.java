package dev.fcap.store.redis.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A set of real Redis processes in a temporary directory, in one of three topologies:
 * a standalone server; a Sentinel group (a master, a replica and one sentinel with quorum 1, failing
 * over after 1 s); or a 3-master cluster made with {@code redis-cli --cluster create}. It knows the
 * store URI for the topology and stops every process and deletes the directory on {@link #close}.
 */
public final class RedisDeployment implements AutoCloseable {
  /** The name under which the sentinel monitors the master. */
  public static final String SENTINEL_MASTER = "fcap";

  public enum Kind { STANDALONE, SENTINEL, CLUSTER }

  private final Kind kind;
  private final Path root;
  private final List<RedisServer> servers = new ArrayList<>();
  private String uri;

  private RedisDeployment(Kind kind) throws IOException {
    this.kind = kind;
    this.root = Files.createTempDirectory("fcap-redis-" + kind.name().toLowerCase() + "-");
  }

  public static RedisDeployment start(Kind kind) throws IOException {
    RedisDeployment d = new RedisDeployment(kind);
    try {
      switch (kind) {
        case STANDALONE -> d.startStandalone();
        case SENTINEL -> d.startSentinel();
        case CLUSTER -> d.startCluster();
      }
      return d;
    } catch (IOException | RuntimeException e) {
      d.close();
      throw e;
    }
  }

  public static RedisDeployment standalone() throws IOException {
    return start(Kind.STANDALONE);
  }

  private void startStandalone() throws IOException {
    int port = RedisServer.freePort(false);
    servers.add(RedisServer.start(root.resolve("standalone"), port));
    uri = "redis://127.0.0.1:" + port;
  }

  private void startSentinel() throws IOException {
    int masterPort = RedisServer.freePort(false);
    RedisServer master = RedisServer.start(root.resolve("master"), masterPort);
    servers.add(master);
    int replicaPort = RedisServer.freePort(false);
    RedisServer replica = RedisServer.start(root.resolve("replica"), replicaPort,
        "--replicaof", "127.0.0.1", Integer.toString(masterPort));
    servers.add(replica);
    awaitCondition(() -> "up".equals(replica.info("replication", "master_link_status")), "replica in sync");
    int sentinelPort = RedisServer.freePort(false);
    Path dir = root.resolve("sentinel");
    Files.createDirectories(dir);
    Path conf = dir.resolve("sentinel.conf");
    Files.writeString(conf, String.join("\n",
        "port " + sentinelPort,
        "bind 127.0.0.1",
        "dir " + dir,
        "sentinel monitor " + SENTINEL_MASTER + " 127.0.0.1 " + masterPort + " 1",
        "sentinel down-after-milliseconds " + SENTINEL_MASTER + " 1000",
        "sentinel failover-timeout " + SENTINEL_MASTER + " 10000",
        "sentinel parallel-syncs " + SENTINEL_MASTER + " 1",
        ""));
    RedisServer sentinel = RedisServer.startCommand(dir, sentinelPort,
        List.of(RedisServer.binary("redis-server"), conf.toString(), "--sentinel"));
    servers.add(sentinel);
    awaitCondition(() -> {
      Object replicas = sentinel.call("SENTINEL", "REPLICAS", SENTINEL_MASTER);
      return replicas instanceof List<?> l && !l.isEmpty();
    }, "sentinel to discover the replica");
    uri = "redis-sentinel://127.0.0.1:" + sentinelPort + "#" + SENTINEL_MASTER;
  }

  private void startCluster() throws IOException {
    List<String> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      int port = RedisServer.freePort(true);
      servers.add(RedisServer.start(root.resolve("node-" + port), port,
          "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000"));
      nodes.add("127.0.0.1:" + port);
    }
    List<String> create = new ArrayList<>(List.of(RedisServer.binary("redis-cli"), "--cluster", "create"));
    create.addAll(nodes);
    create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
    Path log = root.resolve("cluster-create.log");
    try {
      Process p = new ProcessBuilder(create).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IOException("redis-cli --cluster create failed: " + Files.readString(log));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    for (RedisServer s : servers) {
      awaitCondition(() -> "ok".equals(clusterState(s)), "cluster_state:ok on port " + s.port());
    }
    uri = "redis-cluster://" + String.join(",", nodes);
  }

  private static String clusterState(RedisServer s) throws IOException {
    String info = (String) s.call("CLUSTER", "INFO");
    for (String line : info.split("\r\n")) {
      if (line.startsWith("cluster_state:")) {
        return line.substring("cluster_state:".length());
      }
    }
    return null;
  }

  /** A condition checked by polling; exceptions count as "not yet". */
  @FunctionalInterface
  public interface Check {
    boolean ok() throws IOException;
  }

  /** Polls {@code check} for up to 30 s; fails with {@code what} if it never holds. */
  public static void awaitCondition(Check check, String what) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        if (check.ok()) {
          return;
        }
      } catch (IOException | RuntimeException e) {
        // not yet
      }
      if (System.nanoTime() > deadline) {
        throw new IOException("timed out waiting for " + what);
      }
      RedisServer.sleep(50);
    }
  }

  public Kind kind() {
    return kind;
  }

  /** The store URI of this deployment. */
  public String uri() {
    return uri;
  }

  /** Every process (for a sentinel deployment: master, replica, sentinel). */
  public List<RedisServer> servers() {
    return List.copyOf(servers);
  }

  /** The data-holding servers that currently act as masters (asked, not assumed). */
  public List<RedisServer> masters() throws IOException {
    List<RedisServer> masters = new ArrayList<>();
    for (RedisServer s : servers) {
      if (s.isRunning() && !isSentinel(s) && "master".equals(s.info("replication", "role"))) {
        masters.add(s);
      }
    }
    return masters;
  }

  private boolean isSentinel(RedisServer s) {
    return kind == Kind.SENTINEL && s == servers.get(2);
  }

  /** Deletes every key on every master. */
  public void flushAll() throws IOException {
    for (RedisServer s : masters()) {
      s.call("FLUSHALL");
    }
  }

  /** Sum of {@code used_memory} over the masters. */
  public long usedMemory() throws IOException {
    long sum = 0;
    for (RedisServer s : masters()) {
      sum += Long.parseLong(s.info("memory", "used_memory"));
    }
    return sum;
  }

  @Override
  public void close() {
    for (int i = servers.size() - 1; i >= 0; i--) {
      servers.get(i).stop();
    }
    try (Stream<Path> files = Files.walk(root)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort: a temp dir
    }
  }
}
