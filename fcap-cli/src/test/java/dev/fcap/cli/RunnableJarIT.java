package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.fcap.server.grpc.v1.DecideRequest;
import dev.fcap.server.grpc.v1.FcapServiceGrpc.FcapServiceBlockingStub;
import dev.fcap.server.grpc.v1.Message;
import dev.fcap.store.redis.testing.RedisDeployment;
import dev.fcap.store.redis.testing.RedisServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Base64;
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

  /**
   * {@code fcap bench} from the jar, over HTTP and gRPC: every Armeria client loads the shaded
   * BouncyCastle key provider, of which the jar keeps only what its set-up loads.
   */
  @Test
  void benchLoadsAServerFromTheJarOverHttpAndGrpc() throws Exception {
    Path work = Files.createDirectories(dir.resolve("work-bench"));
    try (ServerProcess server = ServerProcess.start(work, "--audit", "none")) {
      for (String protocol : new String[] {"http", "grpc"}) {
        Process p = new ProcessBuilder(java(), "-jar", JAR.toString(), "bench", "--url", server.base, "--protocol",
            protocol, "--duration", "1s", "--warmup", "0s", "--recipients", "1000").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        assertThat(out).as(protocol).contains("fcap bench: " + protocol).contains("errors       0 requests")
            .doesNotContain("NoClassDefFoundError").doesNotContain("ClassNotFoundException");
      }
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

  /**
   * Counters in Redis over TLS ({@code rediss://}): Netty's TLS handler on the JDK's TLS engine, the one
   * the jar carries. The certificate is self-signed ({@code verifyPeer=NONE}): the handshake is the point.
   */
  @Test
  void decidesOnRedisOverTlsFromTheJar() throws Exception {
    Path tls = Files.createDirectories(dir.resolve("tls"));
    selfSignedPem(tls);
    int tlsPort = RedisServer.freePort(false);
    Path work = Files.createDirectories(dir.resolve("work-tls"));
    try (RedisServer redis = RedisServer.start(tls.resolve("redis"), RedisServer.freePort(false), "--tls-port",
            Integer.toString(tlsPort), "--tls-cert-file", tls.resolve("cert.pem").toString(), "--tls-key-file",
            tls.resolve("key.pem").toString(), "--tls-ca-cert-file", tls.resolve("cert.pem").toString(),
            "--tls-auth-clients", "no");
        ServerProcess server = ServerProcess.start(work, "--store",
            "rediss://127.0.0.1:" + tlsPort + "?verifyPeer=NONE", "--audit", "none")) {
      JsonNode d = server.post("/v1/decisions", "{\"recipient\": \"+15550004\", \"content\": \"hi\"}");
      assertThat(d.path("allowed").asBoolean()).isTrue();
      assertThat(server.used("+15550004", "recipient-per-minute")).isEqualTo(1);
      assertThat(redis.call("DBSIZE")).as("keys in the Redis behind TLS").isNotEqualTo(0L);
    }
  }

  /** cert.pem and key.pem for 127.0.0.1, made by the JDK's keytool (redis-server reads PEM). */
  private static void selfSignedPem(Path tls) throws Exception {
    Path p12 = tls.resolve("redis.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
        "-genkeypair", "-alias", "redis", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2", "-dname",
        "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1", "-keystore", p12.toString(), "-storetype", "PKCS12",
        "-storepass", "changeit").redirectErrorStream(true).start();
    String out = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(keytool.waitFor(60, TimeUnit.SECONDS) && keytool.exitValue() == 0).as("keytool: %s", out).isTrue();
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (var in = Files.newInputStream(p12)) {
      store.load(in, "changeit".toCharArray());
    }
    Files.writeString(tls.resolve("cert.pem"), pem("CERTIFICATE", store.getCertificate("redis").getEncoded()));
    Files.writeString(tls.resolve("key.pem"),
        pem("PRIVATE KEY", store.getKey("redis", "changeit".toCharArray()).getEncoded()));
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END " + type + "-----\n";
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
