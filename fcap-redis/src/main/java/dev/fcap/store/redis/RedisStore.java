package dev.fcap.store.redis;

import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import dev.fcap.time.Clock;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The fcap store on Redis: standalone, Sentinel-managed or Redis Cluster, through Lettuce.
 *
 * <p><b>Design.</b> A partition (a recipient, or a shared key such as a sender) is ONE Redis string
 * holding all its counters in the layout docs/redis.md gives byte by byte (the counter states are
 * fcap-core's, but for Redis-only forms: sliding logs in gap form, large logs in block keys), with a TTL equal to the
 * expiry of its longest-lived counter: an idle recipient costs nothing. Its message ids and release
 * records live beside it in a hash of the same slot (the key then {@code "\0M"}), one field per entry,
 * so that a shared partition holding thousands of them still costs O(1) per call. With
 * {@link Builder#groups} the value is instead a field of one of N hashes (its group, by a hash of
 * the partition), which halves a small partition's Redis memory for about 8 % more Redis CPU: the same
 * script, told the field, reads and writes it there (docs/redis.md, "Several partitions per key").
 * Every {@link #apply} is ONE
 * {@code EVALSHA} of {@code partition.lua}, the Lua mirror of {@code PartitionStep}: it reads the
 * clock (Redis {@code TIME} unless the request or the builder supplies a time), evaluates every
 * counter, records only if every enforced check admits, and writes the key back once. So the seed
 * policy's four rules cost one round trip, and Redis's single-threaded script execution makes the
 * step atomic; in a cluster the partition's hash tag keeps it on one slot.
 *
 * <p>The script is loaded on every master when the store is built and called by digest; after a
 * {@code NOSCRIPT} (a flush, a failover to a fresh replica, a resharding) the same call is retried
 * once as {@code EVAL}, which loads it again on that node. Nothing is half-done in between: a script
 * that was not found did not run.
 *
 * <p><b>Failures</b> complete futures with a {@link StoreException}; see {@link Failures} for the
 * reasons. A TIMEOUT is ambiguous (the script may have run), which can only over-count.
 *
 * <p><b>Time.</b> Lua numbers are doubles: times are exact below 2^53 microseconds (the year 2255);
 * a caller time outside that range is refused. Redis TIME is the default clock, so application
 * nodes with skewed clocks cannot over-admit; {@link Builder#clock} substitutes a Java clock (tests,
 * a managed Redis that forbids TIME in scripts), and a request's own time always wins (replays).
 */
public final class RedisStore implements Store {
  private static final byte[] LAYOUT_SCRIPT = loadScript("layout.lua");
  private static final byte[] WARM_UP_PARTITION = {'f', 'c', 'a', 'p', ':', 'w', 'a', 'r', 'm'};

  private final Backend backend;
  private final RedisKeys keys;
  private final String prefix;
  private final String layout;
  private final byte[] script;
  private final String sha;
  private final Clock clock;
  private final Clock localClock;
  private final Duration commandTimeout;
  private final StoreIdentity identity;
  private final int replicaAcks;
  private final long replicaAckTimeoutMs;
  private volatile long redisOffsetMs;
  private final RedisSuppressions suppressions;

  private RedisStore(Builder b, Backend backend) {
    this.backend = backend;
    this.keys = new RedisKeys(b.keyPrefix, b.groups);
    this.prefix = b.keyPrefix;
    this.layout = b.groups == 0 ? "keys" : "groups=" + b.groups;
    this.script = b.script;
    this.sha = sha1(script);
    this.clock = b.clock;
    this.localClock = b.localClock;
    this.commandTimeout = b.commandTimeout;
    this.identity = new StoreIdentity(backend, b.keyPrefix, b.localClock);
    this.replicaAcks = b.replicaAcks;
    this.replicaAckTimeoutMs = b.replicaAckTimeout.toMillis();
    this.suppressions = new RedisSuppressions(backend, keys, commandTimeout, this::now);
  }

  public static Builder builder(String uri) {
    return new Builder(uri);
  }

  /** A store on {@code uri} with default settings. */
  public static RedisStore connect(String uri) {
    return builder(uri).build();
  }

  private void start() {
    String loaded = await(backend.scriptLoad(script), "SCRIPT LOAD");
    if (!sha.equals(loaded)) {
      throw new StoreException(Reason.ERROR, "Redis answered digest " + loaded + " for the script, expected " + sha);
    }
    await(backend.scriptLoad(RedisSuppressions.SCRIPT), "SCRIPT LOAD"); // suppression entries, by digest
    checkLayout();
    await(identity.check(), "identity check"); // written on first connect, read by every later check
    if (clock == null) {
      long redis = await(backend.time(), "TIME");
      redisOffsetMs = redis - localClock.millis();
    }
    // warm both connections and the script path before anyone decides: a first decision should not
    // pay for connecting, class loading or the first EVALSHA (it would look like a slow store)
    byte[] probe = keys.key(WARM_UP_PARTITION);
    byte[][] read = args(RedisRequests.encodeRead(storeTime()), WARM_UP_PARTITION);
    await(call(backend.evalsha(sha, probe, read), null, probe, read, "READ"), "warm-up READ");
    List<CompletionStage<List<Object>>> pipelined = new ArrayList<>();
    backend.pipelined(() -> pipelined.add(backend.evalshaPipelined(sha, probe, read)));
    await(call(pipelined.get(0), null, probe, read, "READ"), "warm-up pipelined READ");
  }

  /**
   * Grouped state is marked in Redis ({@code prefix + "layout"}, {@code "groups=N"}, set by the first
   * grouped store that starts): a store of another layout (a key per partition, or another group
   * count) would find none of it and decide as if every count were zero, so it refuses to start.
   * (A key per partition, the default, leaves no marker; a grouped store started on such state
   * cannot tell, and starts its counts from zero: docs/redis.md, "Several partitions per key".)
   */
  private void checkLayout() {
    byte[] marker = (prefix + "layout").getBytes(StandardCharsets.UTF_8);
    List<Object> held = await(backend.eval(LAYOUT_SCRIPT, marker, layout.getBytes(StandardCharsets.UTF_8)), "layout check");
    String found = new String((byte[]) held.get(0), StandardCharsets.UTF_8);
    if (!found.equals(layout)) {
      throw new StoreException(Reason.ERROR, "the state under prefix '" + prefix + "' is stored in layout '" + found
          + "' and this store is configured for '" + layout + "': it would read none of it (every count forgotten). "
          + "Configure " + found + ", or delete the key " + prefix + "layout and the groups' keys to start over "
          + "(docs/redis.md, \"Several partitions per key\")");
    }
  }

  /** The script's ARGV: the request, and in the grouped layout the partition (its field). */
  private byte[][] args(byte[] request, byte[] partition) {
    return keys.grouped() ? new byte[][] {request, partition} : new byte[][] {request};
  }

  private <T> T await(CompletionStage<T> stage, String what) {
    try {
      return stage.toCompletableFuture().get(commandTimeout.toMillis() * 2, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreException(Reason.UNAVAILABLE, what + " interrupted", e);
    } catch (Exception e) {
      throw Failures.map(e, what);
    }
  }

  /** Where this store's partitions live. */
  RedisKeys keys() {
    return keys;
  }

  /** Where the recipient's suppression entry would be, for a request (to {@code key}) that reads it; else null. */
  private byte[] entryOf(PartitionRequest request, byte[] key) {
    return request.suppression() == null ? null : suppressions.entryOf(request.partition(), key);
  }

  /** The script books deferred messages as the embedded store does (partition.lua, "Bookings"). */
  @Override
  public boolean books() {
    return true;
  }

  @Override
  public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
    String invalid = RedisRequests.invalid(request);
    if (invalid != null) {
      return CompletableFuture.failedFuture(new StoreException(Reason.ERROR, invalid));
    }
    byte[] key = keys.key(request.partition());
    byte[][] args = args(RedisRequests.encode(request, timeFor(request), entryOf(request, key)), request.partition());
    CompletionStage<List<Object>> sent = backend.evalsha(sha, key, args);
    CompletionStage<Long> acked = acks(request, false);
    return call(sent, acked, key, args, request.operation().name())
        .thenApply(reply -> observe(RedisRequests.result(request, reply)));
  }

  /**
   * Sends the requests pipelined: grouped by the node that owns each partition, issued without
   * flushing, then flushed once per node. Each request is still one atomic script call and
   * completes on its own (a failed one fails with its StoreException; the others are unaffected).
   * How long a call may take is the caller's business: the server's failover decorator splits a
   * batch into calls that fit its deadline.
   */
  @Override
  public List<CompletableFuture<PartitionResult>> applyAll(List<PartitionRequest> requests) {
    int n = requests.size();
    if (n == 1) {
      return List.of(apply(requests.get(0)));
    }
    byte[][] keyOf = new byte[n][];
    byte[][][] argOf = new byte[n][][];
    String[] nodeOf = new String[n];
    for (int i = 0; i < n; i++) {
      PartitionRequest r = requests.get(i);
      String invalid = RedisRequests.invalid(r);
      if (invalid != null) {
        StoreException bad = new StoreException(Reason.ERROR, "request " + i + ": " + invalid);
        return requests.stream().map(x -> CompletableFuture.<PartitionResult>failedFuture(bad)).toList();
      }
      keyOf[i] = keys.key(r.partition());
      argOf[i] = args(RedisRequests.encode(r, timeFor(r), entryOf(r, keyOf[i])), r.partition());
      nodeOf[i] = backend.nodeOf(keyOf[i]);
    }
    Integer[] order = new Integer[n];
    Arrays.setAll(order, i -> i);
    Arrays.sort(order, Comparator.comparing(i -> nodeOf[i]));
    List<CompletableFuture<PartitionResult>> futures = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      futures.add(null);
    }
    backend.pipelined(() -> {
      List<CompletionStage<List<Object>>> sent = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        sent.add(null);
      }
      boolean writes = false;
      for (int i : order) {
        sent.set(i, backend.evalshaPipelined(sha, keyOf[i], argOf[i]));
        writes |= requests.get(i).operation() != Operation.CHECK;
      }
      // one WAIT after the batch's writes, on the same connection: it covers every one of them
      CompletionStage<Long> acked = replicaAcks > 0 && writes
          ? backend.waitReplicas(true, replicaAcks, replicaAckTimeoutMs) : null;
      for (int i : order) {
        PartitionRequest r = requests.get(i);
        futures.set(i, call(sent.get(i), r.operation() == Operation.CHECK ? null : acked, keyOf[i], argOf[i],
            r.operation().name()).thenApply(reply -> observe(RedisRequests.result(r, reply))));
      }
    });
    return futures;
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    byte[] key = keys.key(partition);
    byte[][] args = args(RedisRequests.encodeRead(storeTime()), partition);
    return call(backend.evalsha(sha, key, args), null, key, args, "READ").thenApply(RedisRequests::snapshot);
  }

  /**
   * Resets a partition: one script call deletes its value (its key, or its field of the group) and
   * its entries hash (same slot, so atomically), so the message ids and release records from before
   * the reset are forgotten with the counts they would give back. A large log's block keys are left
   * to expire, as before (docs/redis.md, "Large sliding logs").
   */
  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    byte[] key = keys.key(partition);
    byte[][] args = args(RedisRequests.encodeDelete(storeTime()), partition);
    return call(backend.evalsha(sha, key, args), null, key, args, "DELETE").thenApply(reply -> ((byte[]) reply.get(0))[0] == 1);
  }

  /** True: Redis can lose its data while this process runs (a restart without persistence, a flush). */
  @Override
  public boolean keepsIdentity() {
    return true;
  }

  /**
   * Checks the identity key of every master (written on first connect; docs/redis.md, "A Redis that
   * lost its data"): one small script call per master.
   */
  @Override
  public CompletableFuture<Optional<String>> checkIdentity() {
    return identity.check();
  }

  /** The store's clock: the builder's clock, else Redis TIME as last observed (offset from the local clock). */
  @Override
  public long now() {
    return clock != null ? clock.millis() : localClock.millis() + redisOffsetMs;
  }

  @Override
  public void close() {
    backend.close();
  }

  /** This store, or its suppression lists ({@link dev.fcap.store.SuppressionList}), read in each decision's step. */
  @Override
  public <T> java.util.Optional<T> as(Class<T> type) {
    return type.isInstance(this) ? java.util.Optional.of(type.cast(this))
        : type.isInstance(suppressions) ? java.util.Optional.of(type.cast(suppressions)) : java.util.Optional.empty();
  }

  /** The Redis key a partition's calls name: its own, or in the grouped layout its group's hash (tools, tests). */
  public byte[] keyOf(byte[] partition) {
    return keys.key(partition);
  }

  private long timeFor(PartitionRequest request) {
    return request.time() != PartitionRequest.STORE_TIME ? request.time() : storeTime();
  }

  /** The time a request without its own is decided at: the builder's clock, else Redis TIME (STORE_TIME). */
  private long storeTime() {
    return clock == null ? PartitionRequest.STORE_TIME : clock.millis();
  }

  private PartitionResult observe(PartitionResult result) {
    if (clock == null) {
      redisOffsetMs = result.time() - localClock.millis();
    }
    return result;
  }

  /** The WAIT after a request that may write, if replica acknowledgements are asked for; else null. */
  private CompletionStage<Long> acks(PartitionRequest request, boolean pipelined) {
    return replicaAcks > 0 && request.operation() != Operation.CHECK
        ? backend.waitReplicas(pipelined, replicaAcks, replicaAckTimeoutMs) : null;
  }

  /**
   * Runs a script call, retrying once with EVAL on NOSCRIPT, and maps failures. With {@code acked}
   * (the WAIT sent right after the call), the answer counts only once enough replicas have it; a
   * retried EVAL gets a WAIT of its own.
   */
  private CompletableFuture<List<Object>> call(CompletionStage<List<Object>> first, CompletionStage<Long> acked,
      byte[] key, byte[][] args, String what) {
    CompletableFuture<List<Object>> answered = acked == null ? first.toCompletableFuture()
        : first.toCompletableFuture().thenCombine(acked, this::replicated);
    return answered
        .exceptionallyCompose(e -> {
          if (!Failures.isNoScript(e)) {
            return CompletableFuture.failedFuture(e);
          }
          CompletableFuture<List<Object>> again = backend.eval(script, key, args).toCompletableFuture();
          return acked == null ? again
              : again.thenCombine(backend.waitReplicas(false, replicaAcks, replicaAckTimeoutMs), this::replicated);
        })
        .exceptionallyCompose(e -> CompletableFuture.failedFuture(Failures.map(e, what)));
  }

  private List<Object> replicated(List<Object> reply, Long replicas) {
    if (replicas < replicaAcks) {
      throw new StoreException(Reason.UNAVAILABLE, "only " + replicas + " of " + replicaAcks + " replicas "
          + "acknowledged within " + replicaAckTimeoutMs + " ms (the write stays on the master: it may over-count)");
    }
    return reply;
  }

  static byte[] loadScript(String name) {
    try (InputStream in = RedisStore.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + name, e);
    }
  }

  static String sha1(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Settings of a {@link RedisStore}. URIs:
   * <ul>
   *   <li>{@code redis://[[user]:password@]host[:port][/db]}, {@code rediss://...} (TLS)
   *   <li>{@code redis-sentinel://[[user]:password@]host[:port][,host[:port]...][/db]#masterName}
   *   <li>{@code redis-cluster://[[user]:password@]host:port[,host:port...]},
   *       {@code rediss-cluster://...} (TLS); no database in a cluster
   * </ul>
   */
  public static final class Builder {
    /** The longest {@link #flushDelay}: a call never waits longer than this to leave. */
    public static final Duration MAX_FLUSH_DELAY = Duration.ofMillis(10);
    private final String uri;
    private Duration commandTimeout = Duration.ofSeconds(1);
    private Duration connectTimeout = Duration.ofSeconds(2);
    private Clock clock;
    private Clock localClock = Clock.system();
    private String keyPrefix = "fc:";
    private int maxRedirects = 5;
    private int replicaAcks;
    private Duration replicaAckTimeout = Duration.ofMillis(100);
    private int groups;
    private Duration flushDelay = Duration.ZERO;
    private byte[] script = PartitionScript.assembled();

    private Builder(String uri) {
      this.uri = Objects.requireNonNull(uri, "uri");
    }

    /** How long a command may take before it fails with TIMEOUT; default 1 s. */
    public Builder commandTimeout(Duration timeout) {
      this.commandTimeout = positive(timeout, "commandTimeout");
      return this;
    }

    /**
     * Hold each connection's writes for up to {@code delay} (at most {@link #MAX_FLUSH_DELAY}) so that calls sent one
     * by one within it reach Redis as one pipeline: less Redis CPU per call at moderate load, each
     * call up to {@code delay} later (docs/redis.md, "Gathering calls"). Default 0: every call
     * leaves as soon as the connection's event loop has written what was queued.
     */
    public Builder flushDelay(Duration delay) {
      if (delay.isNegative() || delay.compareTo(MAX_FLUSH_DELAY) > 0) {
        throw new IllegalArgumentException("flushDelay must be from 0 to " + MAX_FLUSH_DELAY.toMillis() + "ms, got " + delay);
      }
      this.flushDelay = delay;
      return this;
    }

    /** How long connecting may take; default 2 s. */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    /**
     * Decide at this clock's time instead of Redis {@code TIME} (tests; a managed Redis that forbids
     * TIME). Requests that carry their own time use it in either mode.
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The local clock {@link #now()} adds the observed Redis offset to; default the system clock. */
    public Builder localClock(Clock clock) {
      this.localClock = Objects.requireNonNull(clock, "localClock");
      return this;
    }

    /** Prepended to every key (namespacing); default {@code fc:}; must not contain braces. */
    public Builder keyPrefix(String prefix) {
      new RedisKeys(prefix);
      this.keyPrefix = prefix;
      return this;
    }

    /**
     * Keep the partitions in {@code groups} hashes, each partition a field of its group's hash,
     * instead of a key per partition: a small partition (a recipient) then costs about half the
     * Redis memory, for about 8 % more Redis CPU per decision (docs/benchmarks.md, "Memory
     * per recipient"). Size it to about the live partitions / 16, and set Redis's
     * {@code hash-max-listpack-value} to at least 512 (docs/redis.md, "Several partitions per key").
     * The layout is kept in Redis: a store of another layout or count on the same prefix refuses to
     * start. Default 0: a key per partition.
     */
    public Builder groups(int groups) {
      if (groups < 0) {
        throw new IllegalArgumentException("groups must not be negative");
      }
      this.groups = groups;
      return this;
    }

    /** Cluster redirects (MOVED/ASK) followed per command before failing UNAVAILABLE; default 5. */
    public Builder maxRedirects(int redirects) {
      if (redirects < 0) {
        throw new IllegalArgumentException("maxRedirects must not be negative");
      }
      this.maxRedirects = redirects;
      return this;
    }

    /**
     * Answer a call that may write (DECIDE, RELEASE) only once {@code replicas} replicas have it
     * (Redis {@code WAIT} after it, on the same connection; one WAIT per batch). If fewer acknowledge
     * within {@code timeout}, the call fails UNAVAILABLE; its write stays on the master (it can only
     * over-count). Narrows what a failover can lose to what no replica had acknowledged; WAIT is not
     * a consensus (docs/redis.md). Standalone and Sentinel only. Default 0: off.
     */
    public Builder replicaAcks(int replicas, Duration timeout) {
      if (replicas < 0) {
        throw new IllegalArgumentException("replicaAcks must not be negative");
      }
      this.replicaAcks = replicas;
      this.replicaAckTimeout = positive(timeout, "replicaAckTimeout");
      return this;
    }

    /** The partition script to run instead of {@link PartitionScript#assembled} (tests of its paths). */
    Builder script(byte[] script) {
      this.script = script.clone();
      return this;
    }

    /**
     * Connects, loads the script on every master and reads the Redis clock.
     *
     * @throws IllegalArgumentException if the URI is malformed
     * @throws StoreException if Redis cannot be reached or refuses the script
     */
    public RedisStore build() {
      RedisUris.Target target = RedisUris.parse(uri);
      if (target.cluster() && replicaAcks > 0) {
        throw new IllegalArgumentException("replicaAcks is not offered on a Redis Cluster (standalone and Sentinel only)");
      }
      Backend backend;
      try {
        backend = target.cluster() ? cluster(target.nodes()) : standalone(target.nodes().get(0));
      } catch (RuntimeException e) {
        throw e instanceof IllegalArgumentException ? e : Failures.map(e, "connecting to " + dev.fcap.uri.Redaction.uri(uri));
      }
      RedisStore store = new RedisStore(this, backend);
      try {
        store.start();
      } catch (RuntimeException e) {
        backend.close();
        throw e;
      }
      return store;
    }

    private Backend standalone(RedisURI node) {
      node.setTimeout(handshakeTimeout());
      RedisClient client = RedisClient.create(RedisUris.resources(flushDelay));
      client.setOptions(RedisUris.clientOptions(commandTimeout, connectTimeout));
      return new StandaloneBackend(client, node);
    }

    private Backend cluster(List<RedisURI> nodes) {
      nodes.forEach(n -> n.setTimeout(handshakeTimeout()));
      RedisClusterClient client = RedisClusterClient.create(RedisUris.resources(flushDelay), nodes);
      client.setOptions(RedisUris.clusterOptions(commandTimeout, connectTimeout)
          .maxRedirects(maxRedirects)
          .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
              .enableAllAdaptiveRefreshTriggers()
              .enablePeriodicRefresh(Duration.ofSeconds(30))
              .build())
          .build());
      return new ClusterBackend(client);
    }

    /** The URI timeout bounds the connection handshake; commands have their own (TimeoutOptions). */
    private Duration handshakeTimeout() {
      return commandTimeout.compareTo(connectTimeout) > 0 ? commandTimeout : connectTimeout;
    }

    private static Duration positive(Duration d, String name) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive");
      }
      return d;
    }
  }
}
