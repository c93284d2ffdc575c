package dev.fcap.server.audit;

import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.RuleOutcome;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit trail: every denial (a deferred one with the instant it was booked for) and a sample of
 * admissions, written off the request path.
 *
 * <p><b>Design.</b> A decision thread only builds an event and {@code offer}s it to a bounded queue:
 * it never waits. If the queue is full (the sink is slow or down) the event is dropped and counted
 * ({@link #dropped()}, exported as {@code fcap_audit_dropped_total}); losing audit lines is better
 * than slowing or blocking decisions. One daemon thread drains the queue in batches into the
 * {@link AuditSink}. {@link #close()} stops taking events, drains what is queued and closes the sink,
 * so a graceful shutdown loses nothing that was accepted. Denials also go, synchronously and
 * boundedly, into {@link RecentDenials} for {@code inspect}.
 */
public final class AuditLog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AuditLog.class);
  private static final int BATCH = 1024;
  private final AuditSink sink;
  private final double sampleAdmissions;
  private final BlockingQueue<AuditEvent> queue;
  private final RecentDenials recent;
  private final LongAdder dropped = new LongAdder();
  private final LongAdder written = new LongAdder();
  private final Thread writer;
  private volatile boolean closing;

  public AuditLog(AuditSink sink, double sampleAdmissions, int capacity, RecentDenials recent) {
    this.sink = sink;
    this.sampleAdmissions = sampleAdmissions;
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.recent = recent;
    this.writer = new Thread(this::drain, "fcap-audit-writer");
    writer.setDaemon(true);
    writer.start();
  }

  /** Records a decision: every denial, and admissions at the sample rate. Never blocks. */
  public void decision(Message m, Decision d, String who) {
    // an override is always recorded, with who asked: it may have put a recipient past every cap
    if (d.allowed() && !m.override()
        && (sampleAdmissions == 0 || ThreadLocalRandom.current().nextDouble() >= sampleAdmissions)) {
      return;
    }
    if (!d.allowed()) {
      recent.add(m.tenant(), m.recipient(), new RecentDenials.Denial(d.decisionId(), d.time(), d.blockedBy(),
          m.channel(), m.category()));
    }
    Map<String, long[]> counts = new LinkedHashMap<>();
    for (RuleOutcome r : d.rules()) {
      counts.put(r.id(), new long[] {r.used(), r.limit()});
    }
    offer(new AuditEvent(d.allowed() ? "allowed" : "denied", d.time(), d.decisionId(), m.tenant(), m.recipient(),
        m.channel(), m.category(), d.blockedBy(), d.shadowBlockedBy(), counts, d.policyVersion(), d.degraded(), who,
        m.override() ? "override" : null, null, d.deferred(), d.deferred() ? d.sendAt() : 0));
  }

  /** Records an administrative event (a rule change, a reset). */
  public void admin(String type, long time, String tenant, String recipient, long policyVersion, String who,
      String detail) {
    admin(type, time, tenant, recipient, policyVersion, who, detail, null);
  }

  /** Records an administrative event with the rules it changed, before and after. */
  public void admin(String type, long time, String tenant, String recipient, long policyVersion, String who,
      String detail, List<RuleDiff> changes) {
    offer(new AuditEvent(type, time, null, tenant, recipient, null, null, null, null, null, policyVersion, false, who,
        detail, changes));
  }

  public RecentDenials recent() {
    return recent;
  }

  private void offer(AuditEvent e) {
    if (closing || !queue.offer(e)) {
      dropped.increment();
    }
  }

  /** Events dropped because the queue was full (or the log closing). */
  public long dropped() {
    return dropped.sum();
  }

  /** Events handed to the sink. */
  public long written() {
    return written.sum();
  }

  private void drain() {
    List<AuditEvent> batch = new ArrayList<>(BATCH);
    while (!closing || !queue.isEmpty()) {
      try {
        AuditEvent first = queue.poll(100, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        batch.add(first);
        queue.drainTo(batch, BATCH - 1);
        sink.write(batch);
        written.add(batch.size());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (IOException | RuntimeException e) {
        dropped.add(batch.size());
        LOG.warn("audit sink failed; {} events dropped: {}", batch.size(), e.toString());
      }
      batch.clear();
    }
  }

  /** Stops accepting events, writes what is queued, closes the sink. */
  @Override
  public void close() {
    closing = true;
    try {
      writer.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      sink.close();
    } catch (IOException e) {
      LOG.warn("closing the audit sink failed: {}", e.toString());
    }
  }
}
