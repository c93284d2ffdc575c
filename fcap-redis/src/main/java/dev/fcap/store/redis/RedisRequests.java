package dev.fcap.store.redis;

import dev.fcap.algorithm.PartitionStep;
import dev.fcap.model.Algorithm;
import dev.fcap.model.Suppression;
import dev.fcap.store.Booking;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.StoredCounter;
import dev.fcap.store.SuppressionCheck;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The wire format between {@link RedisStore} and {@code partition.lua}: the request as one binary
 * argument, and the script's reply back into results. The layout is documented at the top of the
 * script and in docs/redis.md.
 */
final class RedisRequests {
  static final int READ = 3;
  /** The script's op that deletes a partition (RedisStore.delete). */
  static final int DELETE = 4;
  private static final Algorithm[] ALGORITHMS = Algorithm.values();
  /** The script's code for a large sliding log in a READ reply (its kind in the value: docs/redis.md). */
  static final int LARGE = 5;

  /**
   * Times the script can hold exactly: GCRA works in microseconds, and Lua numbers are doubles,
   * exact up to 2^53. So |time| must stay below 2^53 / 1000 ms (the year 2255).
   */
  static final long MAX_TIME_MS = (1L << 53) / 1000;

  private RedisRequests() {}

  /** The request's {@code hasTime}: Redis TIME, the store's injected clock, or the request's own time. */
  static final int REDIS_TIME = 0;
  static final int STORE_CLOCK = 1;
  static final int OWN_TIME = 2;
  /** Added to the time kind when the request ends with a message id. */
  static final int MESSAGE_ID = 4;
  /** Added with {@link #MESSAGE_ID} when the message id is a release record that keeps no result. */
  static final int RELEASE_RECORD = 8;
  /** Added with both when the decision is stored as nothing: an incarnation precedes the message id. */
  static final int STORED_AS_NOTHING = 16;
  /** Added when the request ends with the message's suppression scope (Suppression.lua). */
  static final int SUPPRESSION_SCOPE = 32;
  /**
   * Added to a fixed window's algorithm byte when it counts calendar periods ({@link
   * CounterSpec#periods}): their count:u8 and ends:i64 follow its check.
   */
  static final int PERIODS = 128;
  /** Added for a deferred DECIDE: its {@link Booking} follows the counters. */
  static final int BOOKING = 64;
  /** The reply's {@code allowed} byte of a booked decision, whose instant ends the checks. */
  private static final int BOOKED = 2;

  /**
   * Encodes {@code request}; {@code time} is the time to decide at, or STORE_TIME to read Redis
   * TIME. A request that carries its own time says so ({@link #OWN_TIME}): such a time says nothing
   * about real time, so the script does not derive the key's TTL from it alone. {@code entry} says
   * where the recipient's suppression entry would be ({@link RedisSuppressions#entryOf}), sent with
   * the scope of a request that asks for it.
   */
  static byte[] encode(PartitionRequest request, long time, byte[] entry) {
    int size = 28;
    for (CounterRequest c : request.counters()) {
      size += 16 + c.key().length + c.spec().checks() * 25; // limit window enforced bound
      size += c.spec().periods() == 0 ? 0 : 1 + 8 * c.spec().periods(); // a calendar's periods
    }
    Idempotency id = request.idempotency();
    if (id != null) {
      size += 26 + id.tail().length + (id.incarnation() != 0 ? 8 : 0);
    }
    byte[] scope = request.suppression() == null ? null : scope(request.suppression(), entry);
    if (scope != null) {
      size += scope.length + 2;
    }
    Booking booking = request.operation() == Operation.DECIDE ? request.booking() : null;
    if (booking != null) {
      size += 11 + (booking.open() == null ? 0 : 8 * booking.open().length);
    }
    ByteBuffer b = ByteBuffer.allocate(size);
    int timeKind = request.time() != PartitionRequest.STORE_TIME ? OWN_TIME
        : time != PartitionRequest.STORE_TIME ? STORE_CLOCK : REDIS_TIME;
    header(b, request.operation().ordinal(), timeKind, time, request.cost(), request.eventTime(),
        request.counters().size());
    if (id != null) {
      // the request ends with a message id; a release record keeps only the time of the reply
      b.put(1, (byte) (b.get(1) | MESSAGE_ID | (id.replayable() ? 0 : RELEASE_RECORD)
          | (id.incarnation() != 0 ? STORED_AS_NOTHING : 0)));
    }
    for (CounterRequest c : request.counters()) {
      CounterSpec spec = c.spec();
      // the fixed part first, so that the script reads it with one struct.unpack
      b.put((byte) (spec.algorithm().ordinal() | (spec.periods() > 0 ? PERIODS : 0))).put((byte) spec.checks())
          .putShort((short) c.key().length)
          .putLong(c.alignMs()).putInt(spec.precision()).put(c.key());
      for (int i = 0; i < spec.checks(); i++) {
        b.putLong(spec.limit(i)).putLong(spec.windowMs(i))
            .put((byte) ((spec.enforced(i) ? 1 : 0) | (spec.relaxed(i) ? 2 : 0)))
            .putLong(spec.bound(i));
      }
      if (spec.periods() > 0) {
        b.put((byte) spec.periods());
        for (int e = 0; e < spec.periods(); e++) {
          b.putLong(spec.periodEnd(e));
        }
      }
    }
    if (booking != null) {
      b.put(1, (byte) (b.get(1) | BOOKING));
      long[] open = booking.open();
      // times beyond what the script holds exactly (|t| < 2^53 us) are as far as it can tell
      b.putLong(exact(booking.notAfter())).put((byte) ((booking.admitsNow() ? 1 : 0) | (open != null ? 2 : 0)))
          .putShort((short) (open == null ? 0 : open.length / 2));
      for (int k = 0; open != null && k < open.length; k++) {
        b.putLong(exact(open[k]));
      }
    }
    if (id != null) {
      if (id.incarnation() != 0) {
        b.putLong(id.incarnation());
      }
      b.put(id.key()).putLong(id.horizonMs()).put(id.tail()).putShort((short) id.tail().length);
    }
    if (scope != null) { // last, so that the script strips it before it reads anything from the end
      b.put(1, (byte) (b.get(1) | SUPPRESSION_SCOPE));
      b.put(scope).putShort((short) scope.length);
    }
    return b.array();
  }

  private static long exact(long time) {
    return Math.max(1 - MAX_TIME_MS, Math.min(MAX_TIME_MS - 1, time));
  }

  /**
   * The message's scope: hasChannel:u8 len:u16 channel hasCategory:u8 len:u16 category, then where
   * the entry would be ({@code len:u16 bucket recipient}).
   */
  private static byte[] scope(SuppressionCheck check, byte[] entry) {
    byte[] channel = check.channel() == null ? new byte[0] : check.channel().getBytes(StandardCharsets.UTF_8);
    byte[] category = check.category() == null ? new byte[0] : check.category().getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(6 + channel.length + category.length + entry.length)
        .put((byte) (check.channel() == null ? 0 : 1)).putShort((short) channel.length).put(channel)
        .put((byte) (check.category() == null ? 0 : 1)).putShort((short) category.length).put(category)
        .put(entry).array();
  }

  /** A READ request: the live counters of the key. */
  static byte[] encodeRead(long time) {
    return bare(READ, time);
  }

  /** A DELETE request: the partition's value and entries hash go; the reply says if anything was live. */
  static byte[] encodeDelete(long time) {
    return bare(DELETE, time);
  }

  private static byte[] bare(int op, long time) {
    ByteBuffer b = ByteBuffer.allocate(28);
    header(b, op, time == PartitionRequest.STORE_TIME ? REDIS_TIME : STORE_CLOCK, time, 0, 0, 0);
    return b.array();
  }

  private static void header(ByteBuffer b, int op, int timeKind, long time, long cost, long eventTime, int counters) {
    b.put((byte) op).put((byte) timeKind).putLong(timeKind == REDIS_TIME ? 0 : time).putLong(cost).putLong(eventTime)
        .putShort((short) counters);
  }

  /** Why the store cannot send {@code request} as is, or null. */
  static String invalid(PartitionRequest request) {
    long t = request.time();
    if (t != PartitionRequest.STORE_TIME && (t <= -MAX_TIME_MS || t >= MAX_TIME_MS)) {
      return "time " + t + " is outside the range the Redis store can hold exactly (|t| < 2^53 us)";
    }
    if (request.operation() == Operation.RELEASE && Math.abs(request.eventTime()) >= MAX_TIME_MS) {
      return "eventTime " + request.eventTime() + " is out of range";
    }
    if (request.cost() < 1 || request.cost() > 0xFFFF_FFFFL) {
      return "cost must be between 1 and 2^32 - 1";
    }
    if (request.counters().size() > 0xFFFF) {
      return "too many counters in one partition request";
    }
    for (CounterRequest c : request.counters()) {
      if (c.key().length > 0xFFFF || c.spec().checks() > 0xFF) {
        return "counter key or check list too long";
      }
    }
    Booking booking = request.booking();
    if (booking != null && booking.open() != null && booking.open().length / 2 > 0xFFFF) {
      return "too many open spans in one booking";
    }
    return null;
  }

  /**
   * The script's reply to DECIDE, CHECK or RELEASE: one string, {@code now:i64 allowed:u8} then,
   * except for RELEASE, per check {@code used:i64 retry:i64} (milliseconds from now, -1 = never), for a
   * booking (allowed 2) its instant {@code bookedAt:i64}, and for a DECIDE stored as nothing the
   * partition's {@code incarnation:u64}.
   */
  static PartitionResult result(PartitionRequest request, List<Object> reply) {
    if (reply.size() >= 2) {
      // { remembered, 1 }: the message id was decided before (partition.lua, "MESSAGE IDS"); a third
      // item: the recipient's suppression entry, which refuses it now
      PartitionResult r = PartitionStep.replay((byte[]) reply.get(0), request.checks());
      return reply.size() == 2 ? r : new PartitionResult(r.time(), false, r.used(), r.retryAt(), r.replayOf(),
          r.degraded(), r.incarnation(), RedisSuppressions.decode(request.partition(), (byte[]) reply.get(2)));
    }
    ByteBuffer b = ByteBuffer.wrap((byte[]) reply.get(0));
    long time = b.getLong();
    byte decided = b.get();
    boolean allowed = decided == 1;
    int checks = request.checks();
    long[] used = new long[checks];
    long[] retryAt = new long[checks];
    if (request.operation() != Operation.RELEASE) {
      for (int i = 0; i < checks; i++) {
        used[i] = b.getLong();
        long delay = b.getLong();
        retryAt[i] = delay < 0 ? PartitionResult.NEVER : time + delay;
      }
    }
    long bookedAt = decided == BOOKED ? b.getLong() : 0;
    // a suppressed step's reply ends with the entry (never an incarnation, which is 8 bytes)
    Suppression suppressed = request.suppression() != null && b.remaining() > 8
        ? RedisSuppressions.decode(request.partition(), Arrays.copyOfRange(b.array(), b.position(), b.limit())) : null;
    allowed &= suppressed == null;
    Idempotency id = request.idempotency();
    long incarnation = (allowed || bookedAt != 0) && request.operation() == Operation.DECIDE && id != null
        && id.incarnation() != 0 ? b.getLong() : 0;
    return new PartitionResult(time, allowed, used, retryAt, null, false, incarnation, suppressed, bookedAt);
  }

  /**
   * The script's reply to READ: the time, then (id, algorithm, state) per live counter; algorithm
   * {@link #LARGE} with an empty state is a large sliding log, not read whole (a null state).
   */
  static PartitionSnapshot snapshot(List<Object> reply) {
    long time = (Long) reply.get(0);
    List<StoredCounter> counters = new ArrayList<>((reply.size() - 1) / 3);
    for (int i = 1; i + 2 < reply.size(); i += 3) {
      int algorithm = ((Long) reply.get(i + 1)).intValue();
      counters.add(algorithm == LARGE ? new StoredCounter((byte[]) reply.get(i), Algorithm.SLIDING_LOG, null)
          : new StoredCounter((byte[]) reply.get(i), ALGORITHMS[algorithm], (byte[]) reply.get(i + 2)));
    }
    return new PartitionSnapshot(time, counters);
  }
}
