package dev.fcap.engine;

import dev.fcap.model.Message;
import dev.fcap.model.Rule;
import dev.fcap.model.RuleOutcomes;
import dev.fcap.store.Idempotency;
import dev.fcap.store.PartitionAnswer;
import dev.fcap.store.internal.ReusableRequest;
import dev.fcap.store.internal.ReusableResult;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;

/**
 * What one thread's decisions reuse, one after the other: the requests they are built in, and on a
 * store that answers on the calling thread ({@link dev.fcap.store.Store#applyInto}) the answer it writes into and
 * the buffers a one-partition request's keys are written in (a recipient's partition key per key
 * length, a content counter key per counter). A decision made inside another's
 * {@link Engine.RuleVerdicts} callback (on the same thread, while the outer one still reads its answer)
 * takes one of its own.
 */
final class Scratch {
  private static final ThreadLocal<Scratch> OF_THREAD = ThreadLocal.withInitial(Scratch::new);
  /** The longest partition key with a buffer of its own; a longer one is an array of its own. */
  private static final int BUFFERED_KEY_LENGTH = 256;
  final ReusableResult result = new ReusableResult();
  /** A one-partition decision's {@link Prepared}, when its request is in these buffers. */
  final Prepared prepared = new Prepared();
  final PartitionAnswer[] answers = {result};
  private ReusableRequest[] requests = {new ReusableRequest()};
  private int used;
  /** By length; made on first use (a scratch taken inside a callback may never write a key). */
  private byte[][] partitionKeys;
  private byte[][] counterKeys = new byte[4][];
  /** A one-partition decision's random record key ({@link RequestBuilder}), sealed into its id before reuse. */
  final byte[] recordKey = new byte[16];
  /** The idempotency of a decision stored as nothing under {@link #recordKey}, while its horizon stays. */
  private Idempotency storedAsNothing;
  /** Release-record tails by length (made on first use), as {@link #partitionKeys} for keys. */
  private byte[][] tails;
  /** {@link #partitionKey(int)} as the function {@link Keys#recipientPartition} asks for its array. */
  final IntFunction<byte[]> partitionKey = this::partitionKey;
  /** The keys of one {@link Engine#prefetch}, one slot per message. */
  private byte[][] ahead = new byte[0][];
  /** Per slot, its key buffers by length (made on first use), as {@link #partitionKeys} for a decision. */
  private byte[][][] aheadBuffers = new byte[0][][];
  private int aheadSlot;
  private final IntFunction<byte[]> aheadKey = this::aheadKeyOfLength;
  private boolean busy;
  /** The list a decision's outcomes are built in ({@link DecisionAssembly}); its decision keeps the numbers. */
  private RuleOutcomes outcomes;

  /** This thread's outcomes list, refilled for the outcomes of {@code rules} on {@code m}. */
  RuleOutcomes outcomes(List<Rule> rules, Message m, int refused) {
    RuleOutcomes o = outcomes;
    return o == null ? outcomes = new RuleOutcomes(rules, m, refused) : o.refill(rules, m, refused);
  }

  /**
   * The idempotency of a decision under {@link #recordKey} that may be stored as nothing, kept for
   * {@code horizonMs}: its candidate incarnation is read from the key, so one instance serves every
   * decision while the horizon stays.
   */
  Idempotency storedAsNothing(long horizonMs) {
    Idempotency id = storedAsNothing;
    if (id == null || id.horizonMs() != horizonMs) {
      storedAsNothing = id = Idempotency.storedAsNothing(recordKey, horizonMs, ReleaseRecord.IN_ID);
    }
    return id;
  }

  static Scratch take() {
    Scratch s = OF_THREAD.get();
    if (s.busy) {
      s = new Scratch();
    }
    s.busy = true;
    return s;
  }

  /** At least {@code n} requests to fill, reused until {@link #release}. */
  ReusableRequest[] requests(int n) {
    if (n > requests.length) {
      int had = requests.length;
      requests = Arrays.copyOf(requests, Math.max(n, 2 * had));
      for (int i = had; i < requests.length; i++) {
        requests[i] = new ReusableRequest();
      }
    }
    used = Math.max(used, n);
    return requests;
  }

  /** The buffer of partition keys {@code length} bytes long. */
  byte[] partitionKey(int length) {
    if (length > BUFFERED_KEY_LENGTH) {
      return new byte[length];
    }
    if (partitionKeys == null) {
      partitionKeys = new byte[BUFFERED_KEY_LENGTH + 1][];
    }
    return ofLength(partitionKeys, length);
  }

  /** The buffer of release-record tails {@code length} bytes long ({@link ReleaseRecord#encode}). */
  byte[] tail(int length) {
    if (length > BUFFERED_KEY_LENGTH) {
      return new byte[length];
    }
    if (tails == null) {
      tails = new byte[BUFFERED_KEY_LENGTH + 1][];
    }
    return ofLength(tails, length);
  }

  /** The array of {@code length} bytes in {@code byLength} (a table by length), made on first use. */
  private static byte[] ofLength(byte[][] byLength, int length) {
    byte[] key = byLength[length];
    return key != null ? key : (byLength[length] = new byte[length]);
  }

  /** The partition keys {@link Engine#prefetch} hands the store, at least {@code n} slots. */
  byte[][] ahead(int n) {
    if (ahead.length < n) {
      ahead = Arrays.copyOf(ahead, n);
      aheadBuffers = Arrays.copyOf(aheadBuffers, n);
    }
    return ahead;
  }

  /** The function {@link Keys#recipientPartition} asks for slot {@code slot}'s array: one per slot and length. */
  IntFunction<byte[]> aheadKey(int slot) {
    aheadSlot = slot;
    return aheadKey;
  }

  private byte[] aheadKeyOfLength(int length) {
    if (length > BUFFERED_KEY_LENGTH) {
      return new byte[length];
    }
    byte[][] buffers = aheadBuffers[aheadSlot];
    if (buffers == null) {
      buffers = aheadBuffers[aheadSlot] = new byte[BUFFERED_KEY_LENGTH + 1][];
    }
    return ofLength(buffers, length);
  }

  /** The buffer of counter {@code counter}'s key, {@code length} bytes long. */
  byte[] counterKey(int counter, int length) {
    if (counter >= counterKeys.length) {
      counterKeys = Arrays.copyOf(counterKeys, Math.max(counter + 1, 2 * counterKeys.length));
    }
    byte[] key = counterKeys[counter];
    return key != null && key.length == length ? key : (counterKeys[counter] = new byte[length]);
  }

  void release() {
    for (int i = 0; i < used; i++) {
      requests[i].clear(); // keep no request alive between decisions
    }
    used = 0;
    prepared.set(null, null, null, null, null, null, null, 0, false, false, null, 0, null, null);
    busy = false;
  }
}
