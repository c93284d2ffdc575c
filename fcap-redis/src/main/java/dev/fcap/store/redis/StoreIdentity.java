package dev.fcap.store.redis;

import dev.fcap.time.Clock;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The marks that tell a Redis that lost its data (restarted without persistence, flushed, failed over
 * to a replica that had none of it): one identity key per master, {@code prefix + "identity"} (in a
 * cluster with a hash tag per master, see {@link Backend#keyPerMaster}), holding a random id and its
 * creation time, written once without expiry by {@code identity.lua} (get, or set if missing, in one
 * step). A check reads each key and compares it with what this store last saw there: a key missing
 * (this store writes it anew) or holding another id (another node wrote it anew first) is a loss. A key
 * never seen before (the first check, a master added) is adopted, not reported.
 */
final class StoreIdentity {
  private static final byte[] SCRIPT = RedisStore.loadScript("identity.lua");

  private final Backend backend;
  private final String base;
  private final Clock clock;
  private final SecureRandom random = new SecureRandom();
  /** Per identity key, the id last seen there. */
  private final ConcurrentHashMap<String, String> seen = new ConcurrentHashMap<>();

  StoreIdentity(Backend backend, String prefix, Clock clock) {
    this.backend = backend;
    this.base = prefix + "identity";
    this.clock = clock;
  }

  /** Reads (or writes) every master's identity: why data was lost, or empty; fails only if no key answered a loss and one failed. */
  CompletableFuture<Optional<String>> check() {
    List<CompletableFuture<Optional<String>>> each = new ArrayList<>();
    for (byte[] key : backend.keyPerMaster(base)) {
      each.add(checkKey(key));
    }
    return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).handle((v, error) -> {
      List<String> losses = new ArrayList<>();
      for (CompletableFuture<Optional<String>> f : each) {
        if (!f.isCompletedExceptionally()) {
          f.join().ifPresent(losses::add);
        }
      }
      if (losses.isEmpty() && error != null) {
        throw Failures.map(error, "identity check");
      }
      return losses.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", losses));
    });
  }

  private CompletableFuture<Optional<String>> checkKey(byte[] key) {
    String fresh = HexFormat.of().formatHex(bytes(8)) + "@" + clock.millis();
    String name = new String(key, StandardCharsets.UTF_8);
    return backend.eval(SCRIPT, key, fresh.getBytes(StandardCharsets.UTF_8)).toCompletableFuture().thenApply(reply -> {
      String held = new String((byte[]) reply.get(0), StandardCharsets.UTF_8);
      String before = seen.put(name, held);
      if (before == null || before.equals(held)) {
        return Optional.<String>empty();
      }
      return Optional.of(held.equals(fresh)
          ? "the identity key " + name + " is missing (it held " + before + "): Redis restarted empty, was flushed "
              + "or failed over to a replica without the data"
          : "the identity key " + name + " holds " + held + " instead of " + before + ": the data was lost and "
              + "another node wrote a new identity first");
    });
  }

  private byte[] bytes(int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }
}
