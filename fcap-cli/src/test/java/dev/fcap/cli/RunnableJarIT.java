package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Message;
import dev.fcap.store.redis.testing.RedisDeployment;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The shaded {@code target/fcap.jar} as it ships: bounded in size, carrying its licence and the list of
 * what it bundles, printing the build's version, and serving every surface (HTTP, gRPC, console,
 * metrics) with what the shade filters left in it, on the embedded store and on each Redis topology.
 */
class RunnableJarIT {
  /**
   * The bound on the runnable jar, 25 MB in decimal bytes: the jar a platform team downloads, packages
   * and starts, holding only what fcap loads. fcap-cli's pom keeps it under (shade's minimizeJar and
   * filters, each with its reason); a dependency that brings more than it should fails here.
   */
  static final long MAX_JAR_BYTES = 25_000_000;
  static final Path JAR = Path.of(System.getProperty("user.dir"), "target", "fcap.jar");

  @TempDir Path dir;

  @Test
  void jarStaysUnderItsSizeBound() throws IOException {
    assertThat(Files.size(JAR)).as("size of %s in bytes", JAR).isLessThanOrEqualTo(MAX_JAR_BYTES);
  }

  @Test
  void jarCarriesTheLicenceAndTheListOfWhatItBundles() throws IOException {
    try (JarFile jar = new JarFile(JAR.toFile())) {
      assertThat(text(jar, "META-INF/LICENSE")).contains("Apache License").contains("Version 2.0");
      assertThat(text(jar, "META-INF/THIRD-PARTY.txt"))
          .contains("(Apache-2.0) Armeria (armeria) (com.linecorp.armeria:armeria:")
          .contains("(MIT) Lettuce (io.lettuce:lettuce-core:")
          .contains("(BSD-3-Clause) Protocol Buffers [Core] (com.google.protobuf:protobuf-java:")
          .doesNotContain("com.google.code.findbugs:jsr305");
      assertThat(text(jar, "META-INF/NOTICE")).contains("Netty");
      assertThat(jar.getManifest().getMainAttributes().getValue("Implementation-Version"))
          .isEqualTo(System.getProperty("fcap.version"));
    }
  }

  @Test
  void versionIsTheBuildsVersion() throws Exception {
    Process p = new ProcessBuilder(java(), "-jar", JAR.toString(), "--version").redirectErrorStream(true).start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim())
        .isEqualTo("fcap " + System.getProperty("fcap.version"));
  }

  @Test
  void servesHttpGrpcConsoleAndMetricsFromTheJar() throws Exception {
    Path work = Files.createDirectories(dir.resolve("work"));
    try (ServerProcess server = ServerProcess.start(work, "--audit", "none")) {
      JsonNode d = server.post("/v1/decisions", "{\"recipient\": \"+15550001\", \"content\": \"hi\"}");
      assertThat(d.path("allowed").asBoolean()).isTrue();

      FcapServiceBlockingStub grpc = GrpcClients.builder(server.base).build(FcapServiceBlockingStub.class);
      assertThat(grpc.decide(DecideRequest.newBuilder()
          .setMessage(Message.newBuilder().setRecipient("+15550002").setContent("hi")).build()).getAllowed()).isTrue();

      assertThat(status(server, "/")).isEqualTo(200);
      assertThat(status(server, "/console/vendor/chart.umd.min.js")).isEqualTo(200);
      HttpResponse<String> metrics = get(server, "/metrics");
      assertThat(metrics.statusCode()).isEqualTo(200);
      assertThat(metrics.body()).contains("fcap_");
      assertThat(server.get("/openapi.json").path("info").path("license").path("identifier").asText())
          .isEqualTo("Apache-2.0");
      assertThat(server.output()).doesNotContain("NoClassDefFoundError").doesNotContain("ClassNotFoundException");
    }
  }

  /** Counters, rules and audit in Redis: Lettuce and Reactor run from the jar as the shade left them. */
  @ParameterizedTest
  @EnumSource(RedisDeployment.Kind.class)
  void decidesOnRedisFromTheJar(RedisDeployment.Kind kind) throws Exception {
    Path work = Files.createDirectories(dir.resolve("work-" + kind));
    try (RedisDeployment redis = RedisDeployment.start(kind);
        ServerProcess server = ServerProcess.start(work, "--store", redis.uri(), "--rules", redis.uri(), "--audit",
            redis.uri())) {
      for (int i = 0; i < 2; i++) {
        JsonNode d = server.post("/v1/decisions", "{\"recipient\": \"+15550003\", \"content\": \"hi\"}");
        assertThat(d.path("allowed").asBoolean()).isTrue();
      }
      assertThat(server.used("+15550003", "recipient-per-minute")).isEqualTo(2);
      assertThat(server.output()).doesNotContain("NoClassDefFoundError").doesNotContain("ClassNotFoundException");
    }
  }

  private static int status(ServerProcess server, String path) throws IOException, InterruptedException {
    return get(server, path).statusCode();
  }

  private static HttpResponse<String> get(ServerProcess server, String path) throws IOException, InterruptedException {
    return server.http.send(HttpRequest.newBuilder(URI.create(server.base + path)).timeout(Duration.ofSeconds(10))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String text(JarFile jar, String entry) throws IOException {
    var e = jar.getEntry(entry);
    assertThat(e).as(entry).isNotNull();
    return new String(jar.getInputStream(e).readAllBytes(), StandardCharsets.UTF_8);
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
