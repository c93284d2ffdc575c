package dev.fcap.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Summarises the JMH JSON files of {@code fcap-bench/bench-embedded.sh}: per benchmark and
 * implementation, the median throughput over every measured iteration of every round, the share of
 * admitted decisions, the allocation per decision, and fcap's ratio to each implementation.
 *
 * <p>Run: {@code java -cp fcap-bench/target/fcap-bench.jar dev.fcap.bench.RoundsSummary DIR}
 */
public final class RoundsSummary {
  private RoundsSummary() {}

  private static final class Row {
    final List<Double> scores = new ArrayList<>();
    final List<Double> alloc = new ArrayList<>();
    double admitted;
    double refused;
  }

  public static void main(String[] args) throws IOException {
    Map<String, Map<String, Row>> table = new TreeMap<>();
    ObjectMapper json = new ObjectMapper();
    try (Stream<Path> files = Files.list(Path.of(args[0]))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
        for (JsonNode b : json.readTree(f.toFile())) {
          String bench = b.get("benchmark").asText().replaceAll(".*\\.", "");
          Row row = table.computeIfAbsent(bench, k -> new TreeMap<>())
              .computeIfAbsent(b.get("params").get("impl").asText(), k -> new Row());
          b.get("primaryMetric").get("rawData").forEach(fork -> fork.forEach(v -> row.scores.add(v.asDouble())));
          JsonNode sec = b.get("secondaryMetrics");
          row.admitted += sum(sec.get("admitted"));
          row.refused += sum(sec.get("refused"));
          if (sec.has("gc.alloc.rate.norm")) {
            row.alloc.add(sec.get("gc.alloc.rate.norm").get("score").asDouble());
          }
        }
      }
    }
    table.forEach((bench, rows) -> {
      System.out.println();
      System.out.println(bench);
      System.out.println("| implementation | median decisions/s | min .. max | n | admitted | B/decision | fcap-sim / it | fcap / it |");
      System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
      double sim = rows.containsKey("fcap-sim") ? median(rows.get("fcap-sim").scores) : Double.NaN;
      double wall = rows.containsKey("fcap") ? median(rows.get("fcap").scores) : Double.NaN;
      rows.forEach((impl, r) -> {
        double m = median(r.scores);
        System.out.printf("| %s | %,.0f | %,.0f .. %,.0f | %d | %.1f%% | %,.0f | %.2fx | %.2fx |%n", impl, m,
            r.scores.stream().mapToDouble(d -> d).min().orElse(0), r.scores.stream().mapToDouble(d -> d).max().orElse(0),
            r.scores.size(), 100 * r.admitted / Math.max(1, r.admitted + r.refused), median(r.alloc), sim / m, wall / m);
      });
    });
  }

  private static double sum(JsonNode metric) {
    double s = 0;
    if (metric != null) {
      for (JsonNode fork : metric.get("rawData")) {
        for (JsonNode v : fork) {
          s += v.asDouble();
        }
      }
    }
    return s;
  }

  private static double median(List<Double> values) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    List<Double> sorted = values.stream().sorted().toList();
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
