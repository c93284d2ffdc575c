package dev.fcap.store.internal;

import dev.fcap.store.Booking;
import dev.fcap.store.CounterRequest;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.SuppressionCheck;
import java.util.Arrays;
import java.util.List;

/**
 * A {@link PartitionRequest} that its caller owns and refills, one request after another, for a store
 * that answers on the calling thread ({@link CallingThreadStore#applyInto}): a decision then builds no request
 * record, counter list or counter records, and its keys may live in buffers the caller reuses.
 *
 * <p><b>Ownership.</b> A store reads this request only while {@code applyInto} runs and keeps nothing
 * of it: every key it stores, journals or remembers is copied. So a caller may overwrite the key
 * arrays it handed in as soon as {@code applyInto} returns. {@link #toRequest()} (for a store that
 * cannot answer on the calling thread) shares those arrays: a caller that will reuse them must hand
 * fresh ones to a request it converts.
 *
 * <p>Filled in two steps: {@link #set} (the partition and the message), then each counter with
 * {@link #addCounter}. Not thread-safe.
 */
public final class ReusableRequest {
  private byte[] partition;
  private Operation operation;
  private long time;
  private long cost;
  private long eventTime;
  private Idempotency idempotency;
  private String category;
  private SuppressionCheck suppression;
  private Booking booking;
  private int count;
  private byte[][] keys = new byte[4][];
  private CounterSpec[] specs = new CounterSpec[4];
  private long[] aligns = new long[4];
  /** The caller's own counter record, where it gave one ({@link #toRequest()} then reuses it). */
  private CounterRequest[] given = new CounterRequest[4];

  /** Starts a new request, without counters: the last one is gone. */
  public ReusableRequest set(byte[] partition, Operation operation, long time, long cost, long eventTime,
      Idempotency idempotency, String category) {
    this.partition = partition;
    this.operation = operation;
    this.time = time;
    this.cost = cost;
    this.eventTime = eventTime;
    this.idempotency = idempotency;
    this.category = category;
    this.suppression = null;
    this.booking = null;
    Arrays.fill(keys, 0, count, null); // keep no earlier key alive
    Arrays.fill(given, 0, count, null);
    this.count = 0;
    return this;
  }

  /** Drops what this request refers to (it keeps no key, id or counter alive); {@link #set} starts it again. */
  public void clear() {
    set(null, null, 0, 0, 0, null, null);
  }

  /** This request as {@code request} (sharing its arrays), for a store that reads every request as one. */
  public ReusableRequest set(PartitionRequest request) {
    set(request.partition(), request.operation(), request.time(), request.cost(), request.eventTime(),
        request.idempotency(), request.category());
    this.suppression = request.suppression();
    this.booking = request.booking();
    List<CounterRequest> counters = request.counters();
    for (int i = 0; i < counters.size(); i++) {
      addCounter(counters.get(i));
    }
    return this;
  }

  /** Adds a counter. */
  public void addCounter(byte[] key, CounterSpec spec, long alignMs) {
    if (count == keys.length) {
      int n = 2 * count;
      keys = Arrays.copyOf(keys, n);
      specs = Arrays.copyOf(specs, n);
      aligns = Arrays.copyOf(aligns, n);
      given = Arrays.copyOf(given, n);
    }
    keys[count] = key;
    specs[count] = spec;
    aligns[count] = alignMs;
    given[count] = null;
    count++;
  }

  /** Adds a counter the caller keeps as a record (one built once for every message of a rule). */
  public void addCounter(CounterRequest counter) {
    addCounter(counter.key(), counter.spec(), counter.alignMs());
    given[count - 1] = counter;
  }

  /** Sets the message id to remember (null: none); after {@link #set}, when the counters decide it. */
  public void idempotency(Idempotency idempotency) {
    this.idempotency = idempotency;
  }

  /** Asks the store to read the recipient's suppression entry in the step (null: not); after {@link #set}. */
  public void suppression(SuppressionCheck check) {
    this.suppression = check;
  }

  public SuppressionCheck suppression() {
    return suppression;
  }

  /** Asks the store to book the message if it is not admitted now (null: not); after {@link #set}. */
  public void booking(Booking booking) {
    this.booking = booking;
  }

  public Booking booking() {
    return booking;
  }

  /** An immutable request of the same content; it shares this one's arrays (see the class note). */
  public PartitionRequest toRequest() {
    List<CounterRequest> counters = switch (count) { // one or two: no array to copy into the list
      case 0 -> List.of();
      case 1 -> List.of(counter(0));
      case 2 -> List.of(counter(0), counter(1));
      default -> {
        CounterRequest[] all = new CounterRequest[count];
        for (int i = 0; i < count; i++) {
          all[i] = counter(i);
        }
        yield List.of(all);
      }
    };
    return new PartitionRequest(partition, operation, time, cost, counters, eventTime, idempotency, category,
        suppression, booking);
  }

  private CounterRequest counter(int i) {
    return given[i] != null ? given[i] : new CounterRequest(keys[i], specs[i], aligns[i]);
  }

  public byte[] partition() {
    return partition;
  }

  public Operation operation() {
    return operation;
  }

  /** The time to decide at (epoch ms), or {@link PartitionRequest#STORE_TIME}. */
  public long time() {
    return time;
  }

  public long cost() {
    return cost;
  }

  /** For a release: the time the message was recorded at. */
  public long eventTime() {
    return eventTime;
  }

  public Idempotency idempotency() {
    return idempotency;
  }

  public String category() {
    return category;
  }

  /** The number of counters. */
  public int counters() {
    return count;
  }

  public byte[] key(int counter) {
    return keys[counter];
  }

  public CounterSpec spec(int counter) {
    return specs[counter];
  }

  public long alignMs(int counter) {
    return aligns[counter];
  }

  /** The number of checks over all counters: the length of the answer's figures. */
  public int checks() {
    int n = 0;
    for (int i = 0; i < count; i++) {
      n += specs[i].checks();
    }
    return n;
  }
}
