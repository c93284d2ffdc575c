package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.server.auth.Role;
import dev.fcap.server.failure.FailureAction;
import dev.fcap.server.failure.FailurePolicy;
import dev.fcap.server.guard.InputLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
  @TempDir
  Path dir;

  @Test
  void defaults() {
    ServerConfig c = ConfigLoader.defaults();
    assertThat(c.listenHost()).isEqualTo("127.0.0.1");
    assertThat(c.listenPort()).isEqualTo(8080);
    assertThat(c.storeUri()).isEqualTo("memory");
    assertThat(c.apiKeys()).isEmpty();
    assertThat(c.loopbackOnly()).isTrue();
    assertThat(c.maxBatch()).isEqualTo(10_000);
    assertThat(c.failure().actionFor("transactional")).isEqualTo(FailureAction.ALLOW);
    assertThat(c.failure().actionFor(null)).isEqualTo(FailureAction.LOCAL);
    assertThat(c.failure().onReset()).isEqualTo(FailurePolicy.OnReset.DECIDE);
  }

  @Test
  void storeResetIsDecideOrPolicy() {
    assertThat(ConfigLoader.load(null, Map.of("FCAP_FAILURE_STORE_RESET", "policy"), Map.of()).failure().onReset())
        .isEqualTo(FailurePolicy.OnReset.POLICY);
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("FCAP_FAILURE_STORE_RESET", "deny"), Map.of()))
        .hasMessageContaining("FCAP_FAILURE_STORE_RESET").hasMessageContaining("failure.storeReset")
        .hasMessageContaining("expected decide").hasMessageContaining("or policy").hasMessageContaining("'deny'");
  }

  @Test
  void dataDirHoldsTheRulesTheAuditAndTheStateUnlessEachIsSet() {
    ServerConfig byDefault = ConfigLoader.defaults();
    assertThat(byDefault.rulesSource()).isEqualTo(Path.of("data", "rules.yaml").toString());
    assertThat(byDefault.auditSink()).isEqualTo("file:" + Path.of("data", "audit.jsonl"));
    assertThat(byDefault.storeDurability().dir()).isEqualTo(Path.of("data", "state"));

    ServerConfig moved = ConfigLoader.load(null, Map.of("FCAP_DATA_DIR", "/var/lib/fcap"), Map.of());
    assertThat(moved.rulesSource()).isEqualTo("/var/lib/fcap/rules.yaml");
    assertThat(moved.auditSink()).isEqualTo("file:/var/lib/fcap/audit.jsonl");
    assertThat(moved.storeDurability().dir()).isEqualTo(Path.of("/var/lib/fcap/state"));

    ServerConfig explicit = ConfigLoader.load(null, Map.of("FCAP_AUDIT_SINK", "none"),
        Map.of("dataDir", "/srv/fcap", "rules.source", "redis://127.0.0.1:6379"));
    assertThat(explicit.auditSink()).isEqualTo("none");
    assertThat(explicit.rulesSource()).isEqualTo("redis://127.0.0.1:6379");
    assertThat(explicit.storeDurability().dir()).isEqualTo(Path.of("/srv/fcap/state"));
  }

  @Test
  void blankDataDirIsRefusedNamingWhereItCameFrom() {
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("FCAP_DATA_DIR", " "), Map.of()))
        .isInstanceOf(ConfigLoader.ConfigException.class)
        .hasMessageContaining("environment variable FCAP_DATA_DIR").hasMessageContaining("dataDir");
  }

  @Test
  void fileThenEnvironmentThenFlags() throws Exception {
    Path file = dir.resolve("fcap.yaml");
    Files.writeString(file, """
        listen: 0.0.0.0:9000
        store:
          timeout: 30ms
        failure:
          default: deny
          categories: {marketing: local}
        apiKeys:
          - name: ops
            sha256: %s
            tenants: ['*']
            roles: [admin, read]
        """.formatted("ab".repeat(32)));
    ServerConfig c = ConfigLoader.load(file, Map.of("FCAP_STORE_TIMEOUT", "40ms", "FCAP_AUDIT_SAMPLE_ADMISSIONS", "0.5",
        "FCAP_LISTEN", "0.0.0.0:9001"), Map.of("listen", "127.0.0.1:9002"));
    assertThat(c.listenPort()).isEqualTo(9002);
    assertThat(c.failure().timeout()).isEqualTo(Duration.ofMillis(40));
    assertThat(c.failure().actionFor("marketing")).isEqualTo(FailureAction.LOCAL);
    assertThat(c.failure().actionFor("other")).isEqualTo(FailureAction.DENY);
    assertThat(c.failure().actionFor("transactional")).isEqualTo(FailureAction.ALLOW);
    assertThat(c.auditSampleAdmissions()).isEqualTo(0.5);
    assertThat(c.apiKeys()).singleElement().satisfies(k -> {
      assertThat(k.name()).isEqualTo("ops");
      assertThat(k.roles()).containsExactlyInAnyOrder(Role.ADMIN, Role.READ);
      assertThat(k.allowsTenant("anything")).isTrue();
    });
  }

  @Test
  void structuredSettingsFromTheEnvironment() {
    ServerConfig c = ConfigLoader.load(null, Map.of("FCAP_FAILURE_CATEGORIES", "{marketing: deny}",
        "FCAP_API_KEYS", "[{name: a, sha256: " + "cd".repeat(32) + ", tenants: [t1], roles: [decide]}]"), Map.of());
    assertThat(c.failure().actionFor("marketing")).isEqualTo(FailureAction.DENY);
    assertThat(c.apiKeys().get(0).allowsTenant("t1")).isTrue();
    assertThat(c.apiKeys().get(0).allowsTenant("t2")).isFalse();
  }

  @Test
  void mistakesNameTheSettingAndItsSource() throws Exception {
    Path file = dir.resolve("fcap.yaml");
    Files.writeString(file, "store:\n  timout: 5ms\n");
    assertThatThrownBy(() -> ConfigLoader.load(file, Map.of(), Map.of()))
        .hasMessageContaining("unknown setting 'store.timout'");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("FCAP_STORE_TIMEOUT", "soon"), Map.of()))
        .hasMessageContaining("environment variable FCAP_STORE_TIMEOUT").hasMessageContaining("store.timeout");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("FCAP_FAILURE_DEFAULT", "maybe"), Map.of()))
        .hasMessageContaining("local, allow or deny");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("FCAP_API_KEYS", "[{name: a, sha256: xyz, tenants: [t],"
        + " roles: [decide]}]"), Map.of())).hasMessageContaining("64 hex digits");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of(), Map.of("listen", "nowhere")))
        .hasMessageContaining("HOST:PORT");
  }

  @Test
  void safeguardsFromTheEnvironmentAndTheirBounds() {
    ServerConfig c = ConfigLoader.load(null, Map.of("FCAP_HTTP_ALLOWED_HOSTS", "[fcap.internal, fcap.example]",
        "FCAP_LIMITS_MAX_ATTRIBUTES", "10", "FCAP_RULES_SETTLE", "2s"), Map.of());
    assertThat(c.safeguards().allowedHosts()).containsExactly("fcap.internal", "fcap.example");
    assertThat(c.safeguards().limits().maxAttributes()).isEqualTo(10);
    assertThat(c.safeguards().rulesSettle()).hasSeconds(2);
    assertThat(ConfigLoader.defaults().safeguards().limits()).isEqualTo(InputLimits.defaults());
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of(), Map.of("limits.maxValueLength", "5000")))
        .hasMessageContaining("limits.maxValueLength").hasMessageContaining("1024");
  }

  @Test
  void environmentNames() {
    assertThat(ConfigLoader.envName("store.maxBytes")).isEqualTo("FCAP_STORE_MAX_BYTES");
    assertThat(ConfigLoader.envName("apiKeys")).isEqualTo("FCAP_API_KEYS");
    assertThat(ConfigLoader.envName("listen")).isEqualTo("FCAP_LISTEN");
  }

  @Test
  void aSettingGivenTwiceInTheFileIsRefused() throws Exception {
    Path file = dir.resolve("fcap.yaml");
    Files.writeString(file, "store:\n  fsync: 1s\nstore:\n  fsync: \"off\"\n");
    assertThatThrownBy(() -> ConfigLoader.load(file, Map.of(), Map.of())).isInstanceOf(ConfigLoader.ConfigException.class)
        .hasMessageContaining("not valid YAML").hasMessageContaining("Duplicate field 'store'");
    assertThatThrownBy(() -> ConfigLoader.load(dir.resolve("missing.yaml"), Map.of(), Map.of()))
        .hasMessage("cannot read config file " + dir.resolve("missing.yaml") + ": it does not exist");
  }
}
