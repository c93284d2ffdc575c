package dev.fcap.bench;

import dev.fcap.store.redis.testing.RedisDeployment;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs every benchmark command that docs/benchmarks.md documents, on the jar this build just packaged,
 * shrunk to seconds: it checks that each command runs (a missing resource, a renamed option or class
 * fails here), never how fast. A documented command is taken from the document itself, so the test
 * follows the document; each entry point needs a rule below that says how to shrink it, and a
 * command without one fails, so a new benchmark cannot be documented without being run here.
 */
class DocumentedBenchmarksIT {
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final Pattern FENCE = Pattern.compile("(?ms)^```[a-z]*\\n(.*?)^```");
  private static final Pattern MAIN_CLASS = Pattern.compile("dev\\.fcap\\.bench\\.[A-Za-z.]+");

  /** The entry point of a command that runs JMH's own main ({@code java -jar fcap-bench.jar BENCHMARK}). */
  private static final String JMH = "JMH";
  private static final String JMH_QUICK = "-f 1 -wi 0 -i 1 -r 200ms -p streamLength=65536 -jvmArgsAppend -Xmx1g";

  /** The benchmark scripts of {@code scripts/}, each its own entry point. */
  private static final List<String> SCRIPTS = List.of("bench-durability", "bench-redis-floor", "bench-server-suppression",
      "bench-deployed");

  /** How to shrink each entry point's documented arguments to a run of seconds. */
  private static final Map<String, UnaryOperator<List<String>>> SHRINK = new LinkedHashMap<>();

  /**
   * RedisStoreBench's run sizes, given even where the documented line leaves them at their defaults
   * (a memory phase of 10,000 + 20,000 recipients took 50 s; the latency phase measures at least 10 s
   * unless told otherwise).
   */
  private static final Map<String, String> REDIS_BENCH_SIZES =
      Map.of("--seconds", "1", "--reps", "1", "--worst", "200", "--typical", "200", "--latency-seconds", "1");

  static {
    Map<String, String> small = new java.util.HashMap<>(REDIS_BENCH_SIZES);
    small.putAll(Map.of("--recipients", "2000", "--threads", "2", "--latency-threads", "2", "--latency-rate", "200"));
    SHRINK.put("dev.fcap.bench.redis.RedisStoreBench", args -> withSizes(options(args, small), REDIS_BENCH_SIZES));
    SHRINK.put("dev.fcap.bench.CpuHarness", args -> positional(args, "20000", "1"));
    SHRINK.put("dev.fcap.bench.DeferralCost", args -> positional(args, "2000", "1"));
    // --limit where it is not given too: the longest booking at its default limit takes minutes under callgrind
    SHRINK.put("dev.fcap.bench.DeferralCostOnRedis", args -> withSizes(options(args,
        Map.of("--recipients", "50", "--reps", "1", "--limit", "16")), Map.of("--limit", "16")));
    SHRINK.put("dev.fcap.bench.HeapFootprint", args -> positional(args, "2000"));
    SHRINK.put("dev.fcap.bench.MemoryLatency", args -> positional(args, "8", "100000", "1"));
    SHRINK.put("dev.fcap.bench.redis.ScriptProfile", args -> options(args,
        Map.of("--decisions", "2000", "--reps", "1", "--recipients", "500")));
    SHRINK.put("dev.fcap.bench.OracleVerify", args -> positional(args, "3000"));
    SHRINK.put("dev.fcap.bench.redis.LargeLogLatency", args -> options(args, Map.of("--entries", "3000")));
    SHRINK.put("dev.fcap.bench.redis.SharedPartitionProfile", args -> options(args, Map.of("--decisions", "2000", "--step", "1000")));
    SHRINK.put("dev.fcap.bench.SharedPartitionCost", args -> options(args, Map.of("--decisions", "2000", "--block", "1000")));
    SHRINK.put("dev.fcap.bench.ReleaseRecordCost", args -> options(args, Map.of("--decisions", "2000", "--rounds", "1")));
    SHRINK.put("dev.fcap.bench.redis.ReplicaAcksBench", args -> positional(args, "1", "1"));
    SHRINK.put("dev.fcap.bench.redis.GroupedKeysCost", args -> options(args, Map.of("--recipients", "2000", "--calls", "2000")));
    SHRINK.put("dev.fcap.bench.SuppressionBench", args -> options(args,
        Map.of("--entries", "2000", "--decisions", "2000", "--reps", "1")));
    SHRINK.put("bench-embedded.sh", args -> positional(args, "1"));
    SHRINK.put("bench-durability", args -> List.of("1", "2000")); // one round, one small recovery
    SHRINK.put("bench-redis-floor", args -> List.of("1", "2000")); // one rep of 2,000 calls a script
    SHRINK.put("bench-server-suppression", args -> List.of("2000", "2000", "1")); // one run, 2,000 rows and decisions
    SHRINK.put("bench-deployed", args -> List.of(args.get(0), "1", "1s")); // its topology, one round of 1 s rows
    SHRINK.put(JMH, args -> jmh(args));
  }


  @TestFactory
  List<DynamicTest> everyDocumentedBenchmarkCommandRuns() throws IOException {
    List<String> commands = documentedCommands(Files.readString(ROOT.resolve("docs/benchmarks.md")));
    assertThat(commands).as("benchmark commands found in docs/benchmarks.md").isNotEmpty();
    List<DynamicTest> tests = new ArrayList<>();
    java.util.Set<List<String>> shrunk = new java.util.HashSet<>();
    for (String command : commands) {
      List<String> argv = argv(command);
      if (shrunk.add(argv)) { // documented twice, or the same once shrunk: one run says all it can
        tests.add(DynamicTest.dynamicTest(command, () -> run(command, argv)));
      }
    }
    return tests;
  }

  /** Each command line of a fenced block that runs fcap-bench's jar or script (continuations joined). */
  static List<String> documentedCommands(String markdown) {
    List<String> out = new ArrayList<>();
    Matcher block = FENCE.matcher(markdown);
    while (block.find()) {
      for (String line : block.group(1).replace("\\\n", " ").split("\n")) {
        String command = line.replaceAll("\\s+#.*$", "").trim();
        if (command.contains("fcap-bench.jar") && !command.startsWith("./mvnw") || command.contains("bench-embedded.sh")
            || SCRIPTS.stream().anyMatch(script -> command.startsWith("scripts/" + script))) {
          out.add(command);
        }
      }
    }
    return out;
  }

  /** The command line that runs {@code documented} briefly. */
  private static List<String> argv(String documented) {
    List<String> words = words(documented);
    String entry = entryPoint(words);
    UnaryOperator<List<String>> shrink = SHRINK.get(entry);
    if (shrink == null) {
      fail("docs/benchmarks.md documents %s, which DocumentedBenchmarksIT does not know how to run briefly: "
          + "add a rule to SHRINK", entry);
    }
    int at = entry.equals(JMH) ? words.indexOf("fcap-bench/target/fcap-bench.jar")
        : words.indexOf(words.stream().filter(w -> w.endsWith(entry)).findFirst().orElseThrow());
    List<String> argv = new ArrayList<>(jvm(words.subList(0, at)));
    argv.add(words.get(at));
    argv.addAll(shrink.apply(words.subList(at + 1, words.size())));
    return argv;
  }

  private static void run(String documented, List<String> shrunk) throws Exception {
    List<String> argv = new ArrayList<>(shrunk);
    RedisDeployment redis = null;
    for (int i = 0; i < argv.size(); i++) {
      if (argv.get(i).startsWith("redis://")) {
        redis = redis == null ? RedisDeployment.standalone() : redis; // the documented port is the author's own server
        argv.set(i, redis.uri());
      }
    }
    ProcessBuilder pb = new ProcessBuilder(argv).directory(ROOT.toFile()).redirectErrorStream(true);
    pb.environment().put("IMPLS", "fcap");
    pb.environment().put("BENCHES", "decide1");
    pb.environment().put("JMH_ARGS", JMH_QUICK);
    pb.environment().put("HEAP", "-Xmx1g");
    pb.environment().put("FCAP_BENCH_PREBUILT", "1");
    pb.environment().put("WARMUP", "1s"); // scripts/bench-deployed: each row warms up for a second
    pb.environment().put("OUT", ROOT.resolve("fcap-bench/target/smoke-rounds").toString());
    Path log = Files.createTempFile("fcap-bench-smoke", ".log");
    Process p = pb.redirectOutput(log.toFile()).start();
    boolean done = p.waitFor(5, TimeUnit.MINUTES);
    if (!done) {
      p.destroyForcibly();
    }
    if (redis != null) {
      redis.close();
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    Files.delete(log);
    assertThat(done && p.exitValue() == 0)
        .as("%s%nran as: %s%nexit %s, output:%n%s", documented, argv, done ? p.exitValue() : "(timed out)", tail(output))
        .isTrue();
  }

  /** The main class, or the script's file name. */
  private static String entryPoint(List<String> words) {
    for (int i = 0; i < words.size(); i++) {
      String w = words.get(i);
      if (w.endsWith("bench-embedded.sh")) {
        return "bench-embedded.sh";
      }
      for (String script : SCRIPTS) {
        if (w.endsWith(script)) {
          return script;
        }
      }
      if (w.equals("-jar") && i + 1 < words.size() && words.get(i + 1).endsWith("fcap-bench.jar")) {
        return JMH;
      }
      if (MAIN_CLASS.matcher(w).matches()) {
        return w;
      }
    }
    throw new AssertionError("no entry point in " + words);
  }

  /** The documented JVM part without CPU pinning or big heaps (the shrunk runs need neither). */
  private static List<String> jvm(List<String> words) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < words.size(); i++) {
      String w = words.get(i);
      if (w.equals("taskset")) {
        i += 2; // taskset -c CPUS
      } else if (w.startsWith("-Xm") || w.equals("-XX:+AlwaysPreTouch")) {
        continue;
      } else {
        out.add(w);
      }
    }
    return out;
  }

  /** Replaces the values of the given options, drops optional [...] groups, keeps the rest. */
  private static List<String> options(List<String> args, Map<String, String> small) {
    List<String> out = new ArrayList<>();
    boolean optional = false;
    for (int i = 0; i < args.size(); i++) {
      String w = args.get(i);
      if (w.startsWith("[")) {
        optional = true;
      }
      if (!optional) {
        if (small.containsKey(w) && i + 1 < args.size()) {
          out.add(w);
          out.add(small.get(w));
          i++;
        } else if (!w.equals("--redis-cpus") || i + 1 >= args.size()) {
          out.add(w);
        } else {
          i++; // pinning Redis needs a second core free; the run only checks that the command works
        }
      }
      if (w.endsWith("]")) {
        optional = false;
      }
    }
    return out;
  }

  /** {@code args} with each of {@code sizes} added where it is not given. */
  private static List<String> withSizes(List<String> args, Map<String, String> sizes) {
    List<String> out = new ArrayList<>(args);
    new java.util.TreeMap<>(sizes).forEach((option, value) -> {
      if (!out.contains(option)) {
        out.add(option);
        out.add(value);
      }
    });
    return out;
  }

  /** JMH's own options, with the run shortened: the benchmark and its parameters stay as documented. */
  private static List<String> jmh(List<String> args) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String w = args.get(i);
      if (List.of("-f", "-wi", "-w", "-i", "-r").contains(w)) {
        i++; // replaced by JMH_QUICK
      } else {
        out.add(w);
      }
    }
    out.addAll(List.of(JMH_QUICK.split(" ")));
    return out;
  }

  /** Replaces the leading positional numbers, keeps the other arguments. */
  private static List<String> positional(List<String> args, String... small) {
    List<String> out = new ArrayList<>(args);
    for (int i = 0; i < small.length && i < out.size(); i++) {
      out.set(i, small[i]);
    }
    if (out.isEmpty()) {
      out.addAll(List.of(small));
    }
    return out;
  }

  /** Shell-like words: whitespace-separated, single and double quotes removed. */
  private static List<String> words(String line) {
    List<String> out = new ArrayList<>();
    StringBuilder w = new StringBuilder();
    char quote = 0;
    boolean any = false;
    for (char c : line.toCharArray()) {
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else {
          w.append(c);
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
        any = true;
      } else if (Character.isWhitespace(c)) {
        if (any || w.length() > 0) {
          out.add(w.toString());
        }
        w.setLength(0);
        any = false;
      } else {
        w.append(c);
      }
    }
    if (any || w.length() > 0) {
      out.add(w.toString());
    }
    return out;
  }

  private static String tail(String output) {
    return output.length() <= 4000 ? output : "..." + output.substring(output.length() - 4000);
  }
}
