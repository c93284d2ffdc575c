package dev.fcap.engine;

import dev.fcap.model.Dimension;
import dev.fcap.model.InvalidMessageException;
import dev.fcap.model.Message;
import dev.fcap.model.Rule;
import dev.fcap.model.Suppression;
import dev.fcap.store.Booking;
import dev.fcap.store.CounterSpec;
import dev.fcap.store.Idempotency;
import dev.fcap.store.Operation;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.SuppressionCheck;
import dev.fcap.store.SuppressionList;
import dev.fcap.store.internal.ReusableRequest;
import dev.fcap.time.Clock;
import java.time.ZoneId;
import java.util.List;

/**
 * Turns a message into one store request per partition of its plan: the partition and counter keys,
 * each counter's spec and calendar alignment, and the record that remembers the decision (under its
 * message id, or a random key for a decision releasable by id) in the same atomic step as its counts.
 * Keys are written in the thread's buffers for a store that answers on the calling thread, else in
 * arrays of their own, which a store may keep.
 */
final class RequestBuilder {
  private final Clock clock;
  /** How long admitted decisions stay releasable by decision id: -1 the policy's longest window, 0 never. */
  private final long releaseHorizonMs;
  /** The store's suppression lists when read in this process; null: the store keeps none, or checks them itself. */
  private final SuppressionList suppressions;
  /** Whether the store reads the recipient's suppression entry in the step ({@link SuppressionCheck}). */
  private final boolean checkInStep;
  /** Whether the store books deferred messages ({@link dev.fcap.store.Store#books()}). */
  private final boolean books;

  RequestBuilder(Clock clock, long releaseHorizonMs, SuppressionList suppressions, boolean books) {
    this.clock = clock;
    this.books = books;
    this.releaseHorizonMs = releaseHorizonMs;
    this.checkInStep = suppressions != null && suppressions.checkedInStep();
    this.suppressions = checkInStep ? null : suppressions;
  }

  /**
   * Whether a decision with {@code plan} (null: no policy) must first ask the store for the
   * recipient's suppression entry ({@link #probe}): the store checks entries in its step, and no
   * request of the plan reaches the recipient's partition (no rule keyed by the recipient applies).
   */
  boolean probes(CompiledPolicy.Plan plan, Operation op) {
    return checkInStep && op != Operation.RELEASE && (plan == null || !plan.keyedByRecipient());
  }

  /** The dry run of no counter that reads {@code m}'s recipient's suppression entry. */
  PartitionRequest probe(Message m, long time) {
    return new PartitionRequest(Keys.recipientPartition(m.tenant(), m.recipient()), Operation.CHECK, time, m.cost(),
        List.of(), 0L, null, m.category(), new SuppressionCheck(m.channel(), m.category()));
  }

  /**
   * The suppression-list entry that refuses {@code m} at {@code time} (the store's: this builder's
   * clock), or null; a release is never refused. Read before the step, like a send window: a
   * refused DECIDE becomes a dry run, so nothing is recorded.
   */
  Suppression suppression(Message m, Operation op, long time) {
    if (suppressions == null || op == Operation.RELEASE) {
      return null;
    }
    return suppressions.find(m.tenant(), m.recipient(), m.channel(), m.category(),
        time == PartitionRequest.STORE_TIME ? clock.millis() : time);
  }

  /** {@code m} as store requests of their own, which a store may keep. */
  Prepared prepare(CompiledPolicy cp, Message m, Operation op, long time) {
    Scratch scratch = Scratch.take();
    try {
      return prepare(cp, m, op, time, scratch, false);
    } finally {
      scratch.release();
    }
  }

  /**
   * {@code m} as store requests, filled in {@code scratch}'s; with {@code buffered}, a one-partition
   * message's request is left there, its keys in the scratch's buffers (the {@code Prepared}'s
   * requests null: valid until the scratch is released). The message's send windows are judged first
   * (at {@code time}, or this builder's clock for the store's time): a DECIDE that a shut enforced
   * window refuses becomes a dry run, so that nothing is recorded.
   */
  Prepared prepare(CompiledPolicy cp, Message m, Operation op, long time, Scratch scratch, boolean buffered) {
    return prepare(cp, m, op, time, scratch, buffered, suppression(m, op, time));
  }

  /** {@code m} as store requests of their own, refused by {@code suppressed}, an entry the store answered. */
  Prepared prepareSuppressed(CompiledPolicy cp, Message m, Operation op, long time, Suppression suppressed) {
    Scratch scratch = Scratch.take();
    try {
      return prepare(cp, m, op, time, scratch, false, suppressed);
    } finally {
      scratch.release();
    }
  }

  private Prepared prepare(CompiledPolicy cp, Message m, Operation op, long time, Scratch scratch, boolean buffered,
      Suppression suppressed) {
    if (cp == null) {
      return new Prepared().set(m, null, null, op, new PartitionRequest[0], null, null, 0, releaseHorizonMs != 0, true,
          null, time, null, suppressed);
    }
    CompiledPolicy.Plan plan = cp.plan(m);
    boolean defers = m.defer() != null && op == Operation.DECIDE && suppressed == null;
    long base = defers || plan.windows.length > 0 ? time == PartitionRequest.STORE_TIME ? clock.millis() : time : 0;
    if (defers) {
      requireDeferrable(cp, plan, m, base);
    }
    WindowCheck windows = plan.windows.length == 0 ? null : WindowCheck.of(cp, plan, m, base);
    // a deferred message stays a DECIDE in a shut window: its step books it for when the window opens
    op = suppressed != null && op == Operation.DECIDE ? Operation.CHECK
        : defers ? op : WindowCheck.effective(op, windows);
    long releaseHorizon = releaseHorizonMs < 0 ? cp.messageHorizonMs : releaseHorizonMs;
    int partitions = plan.partitions.length;
    boolean inBuffers = buffered && partitions == 1;
    byte[] key = recordKey(m, op, plan, releaseHorizon, inBuffers ? scratch : null);
    long horizon = key == null ? 0 : recordHorizon(cp, m, releaseHorizon);
    ReusableRequest[] built = scratch.requests(partitions);
    byte[] sealedTail = fill(m, cp, plan, op, time, key, horizon, built, partitions, inBuffers ? scratch : null);
    // the first partition's record is releasable unless its tail did not fit (sealed or not, the
    // request's tail is then not NOT_RELEASABLE)
    Idempotency first = partitions == 0 ? null : built[0].idempotency();
    boolean releasable = first != null && first.tail() != ReleaseRecord.NOT_RELEASABLE;
    Booking booking = defers ? booking(cp, m, windows, base) : null;
    if (booking != null && partitions == 1) {
      built[0].booking(booking);
    }
    // in the buffers, the scratch's own instance: read only until the scratch is released, as they are
    return (inBuffers ? scratch.prepared : new Prepared()).set(m, cp, plan, op,
        inBuffers ? null : toRequests(built, partitions), partitions == 0 ? null : built[0].partition(), key, horizon,
        releaseHorizon > 0, releasable, sealedTail, time, windows, suppressed).booking(booking);
  }

  /**
   * Fails unless {@code m}'s deferral can be honoured at {@code base} (the decision's time): the store
   * books, every rule that applies can be booked under ({@link CompiledPolicy#whyNotDeferrable}), and
   * its {@code notAfter} lies within the longest deferral. A deferral of a tenant without a policy is
   * never needed (the message is admitted).
   *
   * @throws InvalidMessageException naming {@code defer} or {@code notAfter}
   */
  void requireDeferrable(CompiledPolicy cp, CompiledPolicy.Plan plan, Message m, long base) {
    if (m.defer() == null || cp == null) {
      return;
    }
    if (!books) {
      throw new InvalidMessageException("defer", "this store cannot book a message for later: deferral needs the "
          + "embedded store");
    }
    String why = cp.whyNotDeferrable(plan, m.priority());
    if (why != null) {
      throw new InvalidMessageException("defer", why);
    }
    if (m.defer().notAfter() - base > CompiledPolicy.MAX_HORIZON_MS) {
      throw new InvalidMessageException("notAfter", "notAfter is more than 7 days after the decision ("
          + (m.defer().notAfter() - base) + " ms)");
    }
  }

  /**
   * What {@code m}'s step may book it at: up to its {@code notAfter} (by default the policy's longest
   * window after {@code base}), where every enforced send window is open.
   */
  private static Booking booking(CompiledPolicy cp, Message m, WindowCheck windows, long base) {
    long notAfter = m.defer().hasNotAfter() ? m.defer().notAfter() : base + cp.messageHorizonMs;
    return new Booking(notAfter, windows == null ? null : windows.openSpans(cp, base, notAfter),
        windows == null || !windows.shut);
  }

  /**
   * Fills {@code requests[0, partitions)} for a decision (or, its send windows shut, a dry run) that no id can release (an engine without
   * releases by decision id): nothing of it is remembered but its message id, if it has one. The
   * keys are written in {@code buffers} (one partition only), or when it is null in arrays of their own.
   */
  void fillUnreleasable(Message m, CompiledPolicy cp, CompiledPolicy.Plan plan, Operation op, long time,
      ReusableRequest[] requests, int partitions, Scratch buffers) {
    byte[] key = recordKey(m, op, plan, 0, null); // a message id's, or none
    long horizon = key == null ? 0 : recordHorizon(cp, m, 0);
    fill(m, cp, plan, op, time, key, horizon, requests, partitions, buffers);
  }

  /**
   * The key a decision is remembered under in its first partition: the message id's fingerprint, or
   * for a decision releasable by id ({@code releaseHorizon} above 0) a random one (in {@code buffers}
   * when not null: the store copies what it keeps, and the decision id is sealed before they are
   * reused); null for none.
   */
  private static byte[] recordKey(Message m, Operation op, CompiledPolicy.Plan plan, long releaseHorizon,
      Scratch buffers) {
    int partitions = plan.partitions.length;
    if (m.messageId() != null && partitions > 0 && op != Operation.RELEASE) {
      // a message id is its recipient's: the recipient's partition says whose, a shared one must be told
      return plan.partitions[0].recipient ? Fingerprint.ofMessageId(m.messageId())
          : Fingerprint.ofMessageId(m.recipient(), m.messageId());
    }
    if (op == Operation.DECIDE && partitions > 0 && releaseHorizon > 0) {
      return Keys.random16(buffers != null ? buffers.recordKey : new byte[16]);
    }
    return null;
  }

  /** How long the record under {@link #recordKey} is kept: a message id as long as any rule reads it. */
  private static long recordHorizon(CompiledPolicy cp, Message m, long releaseHorizon) {
    return m.messageId() != null ? Math.max(cp.messageHorizonMs, releaseHorizon) : releaseHorizon;
  }

  /**
   * Fills {@code requests[0, partitions)}, one per partition of {@code plan}, remembering the decision
   * under {@code key} (null: not remembered) for {@code horizon} ms; returns the release record's tail
   * when the decision id is to seal it (the store then keeps nothing of it), else null. The keys are
   * written in {@code buffers} (one partition only: the buffers are one request's), or when it is
   * null in arrays of their own, which a store may keep ({@link #toRequests}).
   */
  private byte[] fill(Message m, CompiledPolicy cp, CompiledPolicy.Plan plan, Operation op, long time,
      byte[] key, long horizon, ReusableRequest[] requests, int partitions, Scratch buffers) {
    assert buffers == null || partitions == 1;
    // copied into the keys below and kept by none of them: the thread's scratch, not an array per decision
    byte[] fingerprint = Fingerprint.ofMessageContentInScratch(m);
    long alignAt = time == PartitionRequest.STORE_TIME ? clock.millis() : time;
    boolean decide = op == Operation.DECIDE && partitions > 0;
    byte[] sealedTail = null;
    // The other partitions' records are under a key of this decision's own, which the first's lists: a
    // message id comes again from another recipient, or from this one after a reset, while a partition
    // shared by recipients still remembers the first decision under it.
    byte[] othersKey = decide && partitions > 1 && key != null && m.messageId() != null
        ? Keys.random16(new byte[16]) : key;
    // Built last to first, each once: the first partition's record lists the others' keys.
    for (int j = partitions - 1; j >= 0; j--) {
      CompiledPolicy.Partition partition = plan.partitions[j];
      byte[] partitionKey = partitionKey(m, cp, partition, fingerprint, buffers);
      ReusableRequest request = requests[j].set(partitionKey, op, time, m.cost(), 0L, null, m.category());
      if (checkInStep && partition.recipient && op != Operation.RELEASE) {
        request.suppression(new SuppressionCheck(m.channel(), m.category())); // read in the same atomic step
      }
      addCounters(request, cp, m, partition, fingerprint, alignAt, buffers);
      if (key != null && (j == 0 || decide)) {
        // Each partition remembers the decision (the recipient's first, when a rule is keyed by it),
        // atomically with its counts: the first under the message id or a random key, with the other
        // partitions listed; a refusal further on releases it, and the record with it.
        byte[] tail = decide ? ReleaseRecord.encode(m.cost(), request, requests, partitions, j == 0,
            partition.inMessageZone ? cp.policy.zoneOf(m) : null, othersKey == key ? null : othersKey, buffers)
            : ReleaseRecord.NOT_RELEASABLE;
        if (partitions == 1 && m.messageId() == null && tail != ReleaseRecord.NOT_RELEASABLE
            && DecisionIds.sealsRelease(partitionKey.length, tail.length)) {
          // the usual decision: its id seals the release, and the store keeps nothing of it (or, one
          // without incarnations, a record that is the claim alone)
          sealedTail = tail;
          request.idempotency(buffers != null && key == buffers.recordKey ? buffers.storedAsNothing(horizon)
              : Idempotency.storedAsNothing(key, horizon, ReleaseRecord.IN_ID));
        } else {
          request.idempotency(new Idempotency(j == 0 ? key : ReleaseRecord.keyIn(othersKey, j), horizon, tail,
              j == 0 && m.messageId() != null));
        }
      }
    }
    return sealedTail;
  }

  /** The key of {@code partition} for {@code m}: in {@code buffers} when not null (a recipient's). */
  private static byte[] partitionKey(Message m, CompiledPolicy cp, CompiledPolicy.Partition partition,
      byte[] fingerprint, Scratch buffers) {
    return partition.recipient
        ? buffers != null ? Keys.recipientPartition(cp.tenantUtf8, m.recipient(), buffers.partitionKey)
            : Keys.recipientPartition(cp.tenantUtf8, m.recipient())
        : Keys.sharedPartition(m.tenant(), partition.dims, values(m, partition.dims), fingerprint);
  }

  /** The first {@code n} requests as immutable ones, sharing their arrays (filled without buffers). */
  static PartitionRequest[] toRequests(ReusableRequest[] requests, int n) {
    PartitionRequest[] out = new PartitionRequest[n];
    for (int i = 0; i < n; i++) {
      out[i] = requests[i].toRequest();
    }
    return out;
  }

  /** Adds the partition's counters for {@code m} to {@code request}, their keys in {@code buffers} if not null. */
  private static void addCounters(ReusableRequest request, CompiledPolicy cp, Message m,
      CompiledPolicy.Partition partition, byte[] fingerprint, long alignAt, Scratch buffers) {
    CompiledPolicy.Group[] groups = partition.groups;
    boolean mayRelax = m.override() || cp.hasCountOnly;
    for (int i = 0; i < groups.length; i++) {
      CompiledPolicy.Group g = groups[i];
      boolean[] relaxed = mayRelax ? relaxedChecks(cp, g, m) : null;
      if (g.fixedRequest != null && relaxed == null) {
        request.addCounter(g.fixedRequest); // the same for every message: no key to build
        continue;
      }
      // Recipient and content are not read as values (the partition names one, the fingerprint the other).
      byte[] key;
      if (g.plainKey && g.contentKeyed && partition.recipient) {
        int length = 8 + fingerprint.length;
        key = Keys.contentCounterKey(g.id, fingerprint, buffers != null ? buffers.counterKey(i, length) : new byte[length]);
      } else {
        key = Keys.counterKey(g.id, g.key, g.plainKey ? null : values(m, g.key), fingerprint, partition.recipient);
      }
      if (g.calendar != null) {
        // a calendar period in its zone (the message's, for a recipient-zone rule): the fixed window is the period
        ZoneId zone = g.calendarZone(cp.policy.zoneOf(m));
        request.addCounter(key, relax(g.periodSpec(alignAt, zone, m.priority()), relaxed), g.periodAlign(alignAt, zone));
      } else {
        request.addCounter(key, relax(g.spec(m.priority()), relaxed), g.alignMs(alignAt));
      }
    }
  }

  private static CounterSpec relax(CounterSpec spec, boolean[] relaxed) {
    return relaxed == null ? spec : spec.withRelaxed(relaxed);
  }

  /**
   * Per check of {@code g}, whether its enforced rule lets {@code m} through without refusing it (a
   * {@code countOnly} it matches, or an override); null when none does, the usual case.
   */
  private static boolean[] relaxedChecks(CompiledPolicy cp, CompiledPolicy.Group g, Message m) {
    boolean[] relaxed = null;
    for (int c = 0; c < g.rules.length; c++) {
      Rule rule = cp.rule(g.rules[c]);
      if (rule.enforced() && !rule.enforcedFor(m)) {
        relaxed = relaxed == null ? new boolean[g.rules.length] : relaxed;
        relaxed[c] = true;
      }
    }
    return relaxed;
  }

  private static String[] values(Message m, List<Dimension> dims) {
    String[] values = new String[dims.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = dims.get(i).valueOf(m);
    }
    return values;
  }
}
