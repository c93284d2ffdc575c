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

    @Override
    void close();
  }

  /** An engine with caller-supplied time (on any store). */
  public static Target engine(Engine engine) {
    return new Target() {
      @Override
      public Decision decide(Message m, long time, boolean dryRun) {
        return (dryRun ? engine.checkAt(m, time) : engine.decideAt(m, time)).join();
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
      public void close() {
        engine.close();
      }
    };
  }

  /** What a run found. */
  public record Report(long decisions, long admitted, long refused, long overAdmissions, long mismatches,
      List<String> first) {
    public Report plus(Report o) {
      List<String> f = new ArrayList<>(first);
      o.first.stream().limit(Math.max(0, 10 - f.size())).forEach(f::add);
      return new Report(decisions + o.decisions, admitted + o.admitted, refused + o.refused,
          overAdmissions + o.overAdmissions, mismatches + o.mismatches, f);
    }

    public static final Report EMPTY = new Report(0, 0, 0, 0, 0, List.of());

    @Override
    public String toString() {
      return String.format("%,d decisions (%,d admitted, %,d refused): %d over-admissions, %d mismatches%s",
          decisions, admitted, refused, overAdmissions, mismatches, first.isEmpty() ? "" : "; first: " + first);
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
    Oracle oracle = new Oracle(traffic.policy());
    Deque<String> releasable = new ArrayDeque<>();
    java.util.Map<String, String> recipientOf = new java.util.HashMap<>();
    java.util.Map<String, Long> decidedAt = new java.util.HashMap<>();
    long latest = Long.MIN_VALUE;
    long decisions = 0;
    long admitted = 0;
    long refused = 0;
    long over = 0;
    long mismatches = 0;
    List<String> first = new ArrayList<>();
    try (Target target = targets.apply(traffic.policy())) {
      for (long s = 0; s < steps; s++) {
        Traffic.Step step = traffic.next();
        if (step instanceof Traffic.Decide d) {
          Decision actual = target.decide(d.message(), d.time(), d.dryRun());
          latest = Math.max(latest, d.time());
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
    return new Report(decisions, admitted, refused, over, mismatches, first);
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
