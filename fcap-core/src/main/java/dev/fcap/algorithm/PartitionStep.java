package dev.fcap.algorithm;

import dev.fcap.model.Algorithm;
import dev.fcap.store.Booking;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionAnswer;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.internal.ReusableRequest;
import dev.fcap.store.internal.ReusableResult;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The whole atomic step of a partition, as a pure function: given the states of the request's
 * counters (in request order), what the partition remembers under the request's message id, its
 * incarnation and the time, it computes the answer, the next states and what else to write
 * ({@link StepWrites}). A Java store gathers those inputs under its partition lock, calls
 * {@link #apply} and stores what it says; the Redis script {@code partition.lua} is its mirror, and
 * does the same in one script call.
 *
 * <p>All-or-nothing: on DECIDE, every counter is evaluated first, and the message is recorded in
 * every counter (shadow checks too) only if every enforced check admitted. A dry run, a refusal or a
 * replayed decision writes nothing.
 *
 * <p><b>Message ids.</b> A request with an {@link Idempotency} is first looked up in the partition's
 * remembered decisions: if the store holds one for its key, {@link #apply} answers it again
 * ({@link PartitionResult#replayOf()}) and changes no state. A RELEASE carrying one undoes the counts
 * only while the id is remembered, and forgets it (its result's {@code allowed} says whether it
 * released anything). An admitted DECIDE is remembered as {@link #remember} bytes, beside the
 * counters, in the same write: {@code time:i64 allowed:u8 (used:i64 retryDelta:i64)* decisionId
 * idLength:u16}, which is the Redis script's reply plus the id, so both stores keep the same bytes.
 *
 * <p><b>Bookings.</b> A DECIDE with a {@link Booking} (a deferred message) that its counters do not
 * admit now, or that a shut send window refuses now ({@link Booking#admitsNow()}), is recorded instead
 * at the earliest instant its counters admit it within the booking's spans and {@code notAfter}
 * ({@link #book}): in every counter, in this step. Its answer is not allowed, and carries the instant
 * ({@link PartitionAnswer#bookedAt()}); a message id remembers it, with the instant as its time, so
 * that a release by message id gives back the entry there.
 *
 * <p><b>Stored as nothing.</b> A DECIDE whose id carries an incarnation remembers nothing: it stamps
 * the partition's incarnation (the request's, if the partition has no live one); its release (a
 * claim) undoes only in that incarnation, within its horizon, and only once: it remembers its claim.
 */
public final class PartitionStep {

  /** The {@code allowed} byte of {@link #remember} bytes for a booked decision. */
  private static final byte BOOKED = 2;

  private PartitionStep() {}

  /**
   * Whether {@link #apply} needs the partition's incarnation: only the release of a decision stored as
   * nothing (its claim), which undoes only in the incarnation it was decided in.
   */
  public static boolean needsIncarnation(ReusableRequest request) {
    Idempotency id = request.idempotency();
    return id != null && id.incarnation() != 0 && request.operation() != Operation.DECIDE;
  }

  /**
   * Whether the step must look up what the partition remembers under the request's message id: not
   * for a decision writing its own release record (not replayable), whose key is fresh and random
   * (its release, the same key on a RELEASE, does look it up; so does a claim's).
   */
  public static boolean looksUp(ReusableRequest request) {
    Idempotency id = request.idempotency();
    return id != null && (request.operation() != Operation.DECIDE || id.replayable());
  }

  /**
   * The whole atomic step of a partition: applies {@code request} at {@code now}, answering into
   * {@code out} (a store's or its caller's: nothing is allocated for the answer), and says in
   * {@code writes} what the store must write. State i of {@code states} is the state of counter i on
   * entry, read where it lies, and its next state on return: a state the step changed is an array of
   * its own ({@link CounterStates#set}) or a slice of the states' scratch
   * ({@link CounterStates#newState}); one it did not change is left as it was. {@code remembered}
   * is what the partition remembers under the request's message id (null: nothing; read only where
   * {@link #looksUp}); {@code incarnation} is the partition's live incarnation (0: none; read only
   * where {@link #needsIncarnation}). Counter i is the {@link LargeLog} {@code large[i]} when
   * {@code large} and {@code large[i]} are not null (then state i is unused: the log is read in place
   * and, on record or release, changed in place, after every counter was evaluated). A DECIDE or
   * CHECK of a remembered id gets the remembered result again and no state changes.
   */
  public static void apply(ReusableRequest request, long now, CounterStates states, LargeLog[] large,
      byte[] remembered, long incarnation, ReusableResult out, StepWrites writes) {
    writes.clear();
    Idempotency id = request.idempotency();
    if (needsIncarnation(request) && incarnation != id.incarnation()) {
      nothing(request, now, out); // reset or expired since the decision: nothing of it is left
      return;
    }
    count(request, now, states, large, remembered, out);
    Operation op = request.operation();
    if (op == Operation.CHECK || !out.allowed() && out.bookedAt() == 0 || out.replayOf() != null) {
      return; // a dry run, a refused decision or a replayed one changes no state
    }
    writes.changed();
    if (id == null) {
      return;
    }
    boolean decide = op == Operation.DECIDE;
    boolean storedAsNothing = id.incarnation() != 0;
    if (decide == storedAsNothing) {
      // a stamping DECIDE keeps the incarnation (or gives its own) for as long as its id may be released;
      // a release by message id forgets the id with its counts
      if (decide) {
        writes.stamp(id.incarnation(), out.recordedAt() + id.horizonMs());
      } else {
        writes.forget();
      }
    } else {
      // an admitted DECIDE remembers its record, a claim's release its claim
      writes.remember(remember(out, id), decide ? out.recordedAt() + id.horizonMs() : claimExpiresAt(request));
    }
  }

  /** The counters' part of {@link #apply}: evaluate every one, record in all or none. */
  private static void count(ReusableRequest request, long now, CounterStates states, LargeLog[] large,
      byte[] remembered, ReusableResult out) {
    if (remembered != null && request.operation() != Operation.RELEASE) {
      replay(remembered, request.checks(), out);
      return;
    }
    Idempotency id = request.idempotency();
    if (id != null && request.operation() == Operation.RELEASE
        && (id.incarnation() == 0 ? remembered == null : remembered != null || !claimable(request, now))) {
      // a release by message id undoes only what the id still holds: released before, expired or
      // never admitted, it changes nothing (so two releases never give back twice); the release of a
      // decision stored as nothing (incarnation) only while no claim is remembered, within its horizon
      nothing(request, now, out);
      return;
    }
    if (id != null && id.incarnation() != 0) {
      remembered = null; // a claim's release undoes at the request's event time
    }
    // released by message id, the counts are undone at the time the store remembered, whoever asks
    long eventTime = remembered != null ? ByteBuffer.wrap(remembered).getLong() : request.eventTime();
    int counters = request.counters();
    out.reset(request.checks());
    long[] used = out.usedArray();
    long[] retryAt = out.retryAtArray();
    boolean allowed = true;
    int at = 0;
    for (int i = 0; i < counters; i++) {
      CounterSpec spec = request.spec(i);
      CounterAlgorithm algorithm = CounterAlgorithm.of(spec.algorithm());
      LargeLog log = large == null ? null : large[i];
      if (log != null) {
        if (request.operation() == Operation.RELEASE) {
          log.release(spec, now, eventTime, request.cost());
        } else {
          allowed &= log.evaluate(spec, now, request.cost(), used, retryAt, at);
        }
      } else if (request.operation() == Operation.RELEASE) {
        // rare: the state as an array of its own, which a release may answer unchanged
        states.set(i, algorithm.release(states.get(i), spec, request.alignMs(i), now, eventTime, request.cost()));
      } else {
        allowed &= algorithm.evaluate(states.source(i), states.from(i), states.length(i), spec, request.alignMs(i), now,
            request.cost(), used, retryAt, at);
      }
      at += spec.checks();
    }
    Booking booking = request.booking();
    if (booking != null && request.operation() == Operation.DECIDE && (!allowed || !booking.admitsNow())) {
      book(request, now, states, large, booking, out); // not now: booked for later if some instant admits
      return;
    }
    if (allowed && request.operation() == Operation.DECIDE) {
      for (int i = 0; i < counters; i++) {
        CounterSpec spec = request.spec(i);
        if (large != null && large[i] != null) {
          large[i].record(spec, now, request.cost());
        } else {
          CounterAlgorithm.of(spec.algorithm()).record(states, i, spec, request.alignMs(i), now, request.cost());
        }
      }
    }
    out.decided(now, allowed);
  }

  /**
   * Records the message at the earliest instant {@code booking} allows and every counter admits
   * ({@link #bookingTime}), answering it booked there; if there is none, answers it refused and
   * records nothing. A step apart from {@link #count}, which every decision runs.
   */
  private static void book(ReusableRequest request, long now, CounterStates states, LargeLog[] large, Booking booking,
      ReusableResult out) {
    out.decided(now, false);
    long at = large == null ? bookingTime(request, now, states, booking) : -1;
    if (at < 0) {
      return;
    }
    for (int i = 0; i < request.counters(); i++) {
      CounterSpec spec = request.spec(i);
      states.set(i, CounterAlgorithm.of(spec.algorithm()).book(states.get(i), spec, request.alignMs(i), now, at,
          request.cost()));
    }
    out.bookedAt(at);
  }

  /**
   * The earliest instant at or after {@code now} that {@code booking} allows and at which every counter
   * admits the message, or -1 if there is none by its {@code notAfter}. The counters are asked in turn
   * for their first admitting instant from the instant reached so far, which {@link
   * dev.fcap.store.Booking} spans move on to an open one; no step passes the answer (every counter
   * admits there, so its first admitting instant from an earlier one is at most the answer), and once
   * every counter in a row has admitted the instant reached, it is the answer. Asking in turn rather
   * than in rounds spares the round that only confirms: the counters after the last move are asked
   * once. Every move ends a full span of some window or a shut span, so the steps are bounded by the
   * entries and spans; {@value #MAX_BOOKING_ROUNDS} times the counters without an answer refuse.
   */
  private static long bookingTime(ReusableRequest request, long now, CounterStates states, Booking booking) {
    int counters = request.counters();
    for (int i = 0; i < counters; i++) {
      CounterSpec spec = request.spec(i);
      if (CounterAlgorithm.of(spec.algorithm()).bookings(states.source(i), states.from(i), states.length(i), spec,
          request.alignMs(i), now) >= MAX_BOOKINGS) {
        return -1; // full of bookings: the step's work grows with them (see MAX_BOOKINGS)
      }
    }
    long x = booking.firstOpen(now);
    if (counters == 0) {
      return x; // the send windows alone
    }
    for (int step = 0, agreed = 0; x >= 0 && step < MAX_BOOKING_ROUNDS * counters; step++) {
      int i = step % counters;
      CounterSpec spec = request.spec(i);
      long y = CounterAlgorithm.of(spec.algorithm()).admitsFrom(states.source(i), states.from(i), states.length(i),
          spec, request.alignMs(i), x, request.cost());
      if (y == CounterAlgorithm.NEVER) {
        return -1;
      }
      if (y == x) {
        agreed++;
      } else {
        x = booking.firstOpen(y); // past notAfter: -1
        agreed = x == y ? 1 : 0;
      }
      if (agreed == counters) {
        return x;
      }
    }
    return -1;
  }

  /** How many times {@link #bookingTime} asks each counter at most. */
  static final int MAX_BOOKING_ROUNDS = 4096;

  /**
   * How many bookings a counter holds at most (a log's entries after now, a fixed window's windows
   * after now's): a deferral that would add one more is refused. A booking reads every entry of its
   * counters, in each round, and a Redis script that does so must stay within a millisecond; with
   * {@link #MAX_BOOKABLE_CAPACITY} entries before now, a log holds at most 512.
   */
  public static final int MAX_BOOKINGS = 256;

  /** The largest sliding log a deferral may book in (its capacity: {@link #bookable}). */
  public static final int MAX_BOOKABLE_CAPACITY = 256;

  /** Whether a counter of {@code spec} may book: not a sliding log that keeps more than {@link #MAX_BOOKABLE_CAPACITY}. */
  public static boolean bookable(CounterSpec spec) {
    return spec.algorithm() != Algorithm.SLIDING_LOG || SlidingLog.capacity(spec) <= MAX_BOOKABLE_CAPACITY;
  }

  /** The answer of a step that changed nothing and admitted nothing (a release that gives nothing back). */
  public static void nothing(ReusableRequest request, long now, ReusableResult out) {
    out.reset(request.checks());
    out.decided(now, false);
  }

  /**
   * Whether the release of a decision stored as nothing ({@link dev.fcap.store.Idempotency#incarnation()})
   * is still within its horizon at {@code now}: before its event time plus the horizon.
   */
  private static boolean claimable(ReusableRequest request, long now) {
    return now < claimExpiresAt(request);
  }

  /** When the claim of such a release expires: its event time plus the horizon (saturated). */
  public static long claimExpiresAt(ReusableRequest request) {
    long at = request.eventTime() + request.idempotency().horizonMs();
    return at < request.eventTime() ? Long.MAX_VALUE : at;
  }

  /**
   * What a store remembers of an admitted decision under its message id (see the class note): for a
   * release record that is not {@link dev.fcap.store.Idempotency#replayable()}, only
   * {@code time:i64 tail tailLength:u16}.
   */
  public static byte[] remember(PartitionAnswer result, Idempotency id) {
    byte[] decisionId = id.tail();
    if (!id.replayable()) {
      return ByteBuffer.allocate(10 + decisionId.length).putLong(result.recordedAt()).put(decisionId)
          .putShort((short) decisionId.length).array();
    }
    int checks = result.checks();
    ByteBuffer b = ByteBuffer.allocate(11 + 16 * checks + decisionId.length);
    long time = result.recordedAt(); // a booking's, which its release by message id gives back
    b.putLong(time).put((byte) (result.bookedAt() != 0 ? BOOKED : result.allowed() ? 1 : 0));
    for (int i = 0; i < checks; i++) {
      long retryAt = result.retryAt(i);
      b.putLong(result.used(i)).putLong(retryAt == CounterAlgorithm.NEVER ? -1 : Math.max(0, retryAt - time));
    }
    return b.put(decisionId).putShort((short) decisionId.length).array();
  }

  /** The result a remembered decision is answered with again; {@code checks} is the request's. */
  public static PartitionResult replay(byte[] remembered, int checks) {
    ReusableResult out = new ReusableResult();
    replay(remembered, checks, out);
    return out.toResult();
  }

  private static void replay(byte[] remembered, int checks, ReusableResult out) {
    ByteBuffer b = ByteBuffer.wrap(remembered);
    long time = b.getLong();
    byte decided = b.get();
    boolean allowed = decided == 1;
    out.reset(checks);
    long[] used = out.usedArray();
    long[] retryAt = out.retryAtArray();
    int idLength = tailLength(remembered);
    int idAt = remembered.length - 2 - idLength;
    int stored = Math.max(0, idAt - 9) / 16; // 0 for a release record: its time, then its tail
    for (int i = 0; i < checks; i++) {
      // a policy edit may have changed the checks since: what was not decided then reads as admitted
      if (i < stored) {
        used[i] = b.getLong();
        long delta = b.getLong();
        retryAt[i] = delta < 0 ? CounterAlgorithm.NEVER : time + delta;
      } else {
        retryAt[i] = time;
      }
    }
    out.decided(time, allowed);
    if (decided == BOOKED) {
      out.bookedAt(time); // answered again as decided at its booked time, every check admitting there
    }
    out.replayOf(new String(remembered, idAt, idLength, StandardCharsets.ISO_8859_1));
  }

  /** The length of the tail that {@link #remember} bytes end with (a u16 after it). */
  public static int tailLength(byte[] remembered) {
    return (remembered[remembered.length - 2] & 0xff) << 8 | (remembered[remembered.length - 1] & 0xff);
  }

  /** The first instant at which state {@code i} of {@code states}, a counter of {@code spec}'s, stops mattering. */
  public static long expiresAt(CounterSpec spec, long alignMs, CounterStates states, int i) {
    return CounterAlgorithm.of(spec.algorithm()).expiresAt(states.source(i), states.from(i), states.length(i), spec,
        alignMs);
  }

  /**
   * Reads a stored counter for inspection: {@code used[at + i]} and, for a message of cost 1,
   * {@code retryAt[at + i]} (when the next message would pass) per check of {@code spec}.
   */
  public static void inspect(byte[] state, CounterRequest c, long now, long[] used, long[] retryAt, int at) {
    CounterAlgorithm.of(c.spec().algorithm()).evaluate(state, c.spec(), c.alignMs(), now, 1, used, retryAt, at);
  }
}
