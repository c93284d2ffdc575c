#!/bin/sh
# Embedded-engine throughput (docs/benchmarks.md, "Embedded engine"): fcap and the in-process
# peers in interleaved rounds, every implementation once per round in its own JMH fork, so that the
# load of a shared machine hits all of them alike; then the medians over rounds x iterations.
# Usage: fcap-bench/bench-embedded.sh [rounds]   (after ./mvnw -B -q -pl fcap-bench -am package -DskipTests)
# IMPLS, BENCHES and JMH_ARGS override the implementations, benchmarks and JMH run options (the
# build's DocumentedBenchmarksIT uses them to check in seconds that the command runs).
# BASE_JAR (optional) is another build of fcap-bench.jar (e.g. an older commit's, built into /tmp):
# each round then also runs BASE_IMPLS (default: fcap-sim fcap) from it, right after the same
# implementations of this build, into $OUT/base, summarised apart: a before/after in one run.
set -eu
JAR=${JAR:-fcap-bench/target/fcap-bench.jar}
OUT=${OUT:-fcap-bench/target/embedded-rounds}
ROUNDS=${1:-3}
IMPLS=${IMPLS:-fcap-sim fcap bucket4j bucket4j-sim resilience4j guava sentinel}
BENCHES=${BENCHES:-decide1 decide2}
JMH_ARGS=${JMH_ARGS:--f 1 -wi 2 -w 3 -i 4 -r 3}
# LAUNCHER_OPTS: options of the JMH launcher JVM, e.g. -Djmh.ignoreLock=true when another JMH run
# holds /tmp/jmh.lock on a shared machine (the figures then share the cores with it).
LAUNCHER_OPTS=${LAUNCHER_OPTS:-}
BASE_JAR=${BASE_JAR:-}
BASE_IMPLS=${BASE_IMPLS:-fcap-sim fcap}
mkdir -p "$OUT"
if [ -n "$BASE_JAR" ]; then mkdir -p "$OUT/base"; fi
for round in $(seq 1 "$ROUNDS"); do
  for bench in $BENCHES; do
    for impl in $IMPLS; do
      # shellcheck disable=SC2086 # JMH_ARGS and LAUNCHER_OPTS are lists of options
      java $LAUNCHER_OPTS -jar "$JAR" "DecisionBenchmark.$bench\$" -p impl="$impl" $JMH_ARGS -prof gc \
        -rf json -rff "$OUT/$bench-$impl-$round.json" > "$OUT/$bench-$impl-$round.log" 2>&1
      if [ -n "$BASE_JAR" ] && echo " $BASE_IMPLS " | grep -q " $impl "; then
        # shellcheck disable=SC2086
        java $LAUNCHER_OPTS -jar "$BASE_JAR" "DecisionBenchmark.$bench\$" -p impl="$impl" $JMH_ARGS -prof gc \
          -rf json -rff "$OUT/base/$bench-$impl-$round.json" > "$OUT/base/$bench-$impl-$round.log" 2>&1
      fi
    done
  done
done
java -cp "$JAR" dev.fcap.bench.RoundsSummary "$OUT"
if [ -n "$BASE_JAR" ]; then
  echo; echo "base ($BASE_JAR):"
  java -cp "$JAR" dev.fcap.bench.RoundsSummary "$OUT/base"
fi
