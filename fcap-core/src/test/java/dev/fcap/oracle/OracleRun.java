package dev.fcap.oracle;

import dev.fcap.engine.Engine;
import dev.fcap.model.Decision;
import dev.fcap.model.Message;
import dev.fcap.model.Policy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Function;

/**
 * Drives one {@link Traffic} stream into a system under test and into the {@link Oracle}, decision
 * by decision, and counts what differs. Plain Java (no test framework), so the same run serves the
 * test suite and {@code OracleVerify}, the long run in fcap-bench.
 */
public final class OracleRun {
  /** What the oracle is held against: an engine, or a path around one. */
  public interface Target extends AutoCloseable {
    Decision decide(Message m, long time, boolean dryRun);

    boolean release(String decisionId);

    void setPolicy(Policy policy);

    void reset(String tenant, String recipient);

    /** The suppression list its decisions read, if it has one. */
    default java.util.Optional<dev.fcap.store.SuppressionList> suppressions() {
      return java.util.Optional.empty();
    }

    @Override
    void close();
  }

  /** An engine with caller-supplied time (on any store). */
  public static Target engine(Engine engine) {
    return engine(engine, (m, time, dryRun) -> (dryRun ? engine.checkAt(m, time) : engine.decideAt(m, time)).join());
  }

  /**
   * An engine deciding at its store's time through {@link Engine#decideNow}: each decision first sets
   * the clock that the store and the engine share ({@code setClock}) to the decision's time.
   */
  public static Target engineDecidingNow(Engine engine, java.util.function.LongConsumer setClock) {
    return engine(engine, (m, time, dryRun) -> {
      setClock.accept(time);
      return dryRun ? engine.check(m).join() : engine.decideNow(m);
    });
  }

  /** How a target decides one message at a time. */
  private interface Decider {
    Decision decide(Message m, long time, boolean dryRun);
  }

  private static Target engine(Engine engine, Decider decider) {
    return new Target() {
      @Override
      public Decision decide(Message m, long time, boolean dryRun) {
        return decider.decide(m, time, dryRun);
      }

      @Override
      public boolean release(String decisionId) {
        return engine.release(decisionId).join();
      }

      @Override
      public void setPolicy(Policy policy) {
        engine.setPolicy(policy);
      }

      @Override
      public void reset(String tenant, String recipient) {
        engine.reset(tenant, recipient).join();
      }

      @Override
      public java.util.Optional<dev.fcap.store.SuppressionList> suppressions() {
        return engine.suppressions();
      }

      @Override
      public void close() {
        engine.close();
      }
    };
  }

  /** What a run found. */
  public record Report(long decisions, long admitted, long refused, long suppressed, long overAdmissions,
      long mismatches, List<String> first) {
    public Report plus(Report o) {
      List<String> f = new ArrayList<>(first);
      o.first.stream().limit(Math.max(0, 10 - f.size())).forEach(f::add);
      return new Report(decisions + o.decisions, admitted + o.admitted, refused + o.refused,
          suppressed + o.suppressed, overAdmissions + o.overAdmissions, mismatches + o.mismatches, f);
    }

    public static final Report EMPTY = new Report(0, 0, 0, 0, 0, 0, List.of());

    @Override
    public String toString() {
      return String.format("%,d decisions (%,d admitted, %,d refused, %,d of them suppressed): %d over-admissions,"
          + " %d mismatches%s", decisions, admitted, refused, suppressed, overAdmissions, mismatches,
          first.isEmpty() ? "" : "; first: " + first);
    }
  }

  /** Releasable decisions kept (the engine's ledger keeps 65,536; fewer keeps the oracle small). */
  private static final int RELEASABLE = 4096;

  /** How long targets keep decisions releasable: the engine's longest release horizon, set by the tests. */
  static final long RELEASE_HORIZON_MS = 7L * 24 * 3600 * 1000;

  private OracleRun() {}

  /**
   * Runs {@code steps} steps of {@code traffic} on a target made for its policy; the oracle judges
   * every decision. Stops collecting examples after 10 but counts every mismatch.
   */
  public static Report run(Traffic traffic, Function<Policy, Target> targets, long steps) {
    return run(traffic, targets, steps, null);
  }

  /**
   * {@link #run(Traffic, Function, long)} with suppression entries coming and going through the
   * target's {@link Target#suppressions() list} before its decisions ({@code churn}; null: none): a
   * decision the churn says is suppressed is judged by {@link SuppressionChurn#judge} (an admission
   * counts as an over-admission too) and not recorded by the oracle (which only notes its time, the
   * engine releasing at the latest time it was asked at), which so also checks that it counted
   * nothing.
   */
  public static Report run(Traffic traffic, Function<Policy, Target> targets, long steps, SuppressionChurn churn) {
    Oracle oracle = new Oracle(traffic.policy());
    Deque<String> releasable = new ArrayDeque<>();
    java.util.Map<String, String> recipientOf = new java.util.HashMap<>();
    java.util.Map<String, Long> decidedAt = new java.util.HashMap<>();
    long latest = Long.MIN_VALUE;
    long decisions = 0;
    long admitted = 0;
    long refused = 0;
    long suppressed = 0;
    long over = 0;
    long mismatches = 0;
    List<String> first = new ArrayList<>();
    try (Target target = targets.apply(traffic.policy())) {
      dev.fcap.store.SuppressionList list = churn == null ? null : target.suppressions().orElseThrow(
          () -> new IllegalArgumentException("suppression churn on a target without a suppression list"));
      for (long s = 0; s < steps; s++) {
        Traffic.Step step = traffic.next();
        if (step instanceof Traffic.Decide d) {
          String tenant = d.message().tenant();
          if (list != null) {
            churn.beforeDecision(list, tenant, d.message(), d.time());
          }
          Decision actual = target.decide(d.message(), d.time(), d.dryRun());
          latest = Math.max(latest, d.time());
          dev.fcap.model.Suppression entry = list == null ? null : churn.covering(tenant, d.message(), d.time());
          if (entry != null) {
            decisions++;
            suppressed++;
            if (actual.allowed()) {
              admitted++;
              over++;
            } else {
              refused++;
            }
            List<String> wrong = SuppressionChurn.judge(actual, entry);
            if (!wrong.isEmpty()) {
              mismatches++;
              if (first.size() < 10) {
                first.add("seed " + traffic.seed() + " step " + s + " at " + d.time() + (d.dryRun() ? " (dry run) " : " ")
                    + d.message() + " suppressed by " + entry + ": " + wrong);
              }
            }
            // counted nothing: the oracle records nothing, but notes the time, at which later releases run
            oracle.decide(d.message(), d.time(), true, null, null);
            continue;
          }
          Oracle.Verdict v = oracle.decide(d.message(), d.time(), d.dryRun(), actual, actual.decisionId());
          decisions++;
          if (actual.allowed()) {
            admitted++;
          } else {
            refused++;
          }
          if (v.overAdmission()) {
            over++;
          }
          if (!v.matches()) {
            mismatches++;
            if (first.size() < 10) {
              first.add("seed " + traffic.seed() + " step " + s + " at " + d.time() + (d.dryRun() ? " (dry run) " : " ") + d.message() + ": "
                  + v.mismatches());
            }
          }
          if (actual.allowed() && !d.dryRun()) {
            releasable.addLast(actual.decisionId());
            recipientOf.put(actual.decisionId(), d.message().recipient());
            decidedAt.put(actual.decisionId(), d.time());
            if (releasable.size() > RELEASABLE) {
              String gone = releasable.removeFirst();
              recipientOf.remove(gone);
              decidedAt.remove(gone);
              oracle.forget(gone);
            }
          }
        } else if (step instanceof Traffic.Release r && !releasable.isEmpty()) {
          String id = pick(releasable, r.pick());
          recipientOf.remove(id);
          Long decided = decidedAt.remove(id);
          if (decided != null && decided + RELEASE_HORIZON_MS - 1000 <= latest) {
            oracle.forget(id); // past the targets' release horizon (or within its rounding): expired
            continue;
          }
          boolean a = target.release(id);
          boolean b = oracle.release(id);
          if (a != b) {
            mismatches++;
            if (first.size() < 10) {
              first.add("seed " + traffic.seed() + " step " + s + ": release " + a + ", oracle " + b);
            }
          }
        } else if (step instanceof Traffic.Edit e) {
          target.setPolicy(e.policy());
          oracle.setPolicy(e.policy()); // decisions made before the edit stay releasable
        } else if (step instanceof Traffic.Reset r) {
          target.reset(oracle.policy().tenant(), r.recipient());
          oracle.reset(oracle.policy().tenant(), r.recipient());
          // a reset forgets the recipient's release records with its counters: its decisions are not
          // released afterwards (one keyed also without the recipient would stay counted there)
          releasable.removeIf(id -> {
            boolean gone = r.recipient().equals(recipientOf.get(id));
            if (gone) {
              recipientOf.remove(id);
              oracle.forget(id);
            }
            return gone;
          });
        }
      }
    }
    return new Report(decisions, admitted, refused, suppressed, over, mismatches, first);
  }

  private static String pick(Deque<String> ids, int pick) {
    if (pick < 0) {
      return ids.removeLast();
    }
    int at = pick % ids.size();
    var it = ids.iterator();
    for (int i = 0; i < at; i++) {
      it.next();
    }
    String id = it.next();
    it.remove();
    return id;
  }
}
