package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fcap.server.decision.DecisionService;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /openapi.json} as a client generator reads it: an independent linter (Redocly's, which
 * scripts/test installs from npm with openapi-typescript and TypeScript) finds nothing to warn about,
 * a generated TypeScript client types the seed scenario, a batch's items are typed as messages,
 * no request field with a default comes out required, and decision ids are bounded as the server
 * bounds them.
 */
class OpenApiLintIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void redoclyLintsTheSpecWithoutAWarning() throws Exception {
    Path spec = dir.resolve("openapi.json");
    try (InputStream in = spec().openStream()) {
      Files.copy(in, spec);
    }
    Run lint = run("redocly", "lint", spec.toString(), "--format=stylish");
    assertThat(lint.exit()).as(lint.output()).isZero();
    assertThat(lint.output()).contains("Your API description is valid").doesNotContain("You have")
        .doesNotContainPattern("(?m)^\\s+\\d+:\\d+\\s+(warning|error)");
  }

  /**
   * A TypeScript client generated from the spec (openapi-typescript) types the seed scenario: a decision,
   * a batch of messages without the defaulted fields, the answer; a batch item of the wrong type does not
   * compile.
   */
  @Test
  void generatedTypeScriptTypesTheSeedScenario() throws Exception {
    Path spec = dir.resolve("openapi.json");
    try (InputStream in = spec().openStream()) {
      Files.copy(in, spec);
    }
    assertThat(run("openapi-typescript", spec.toString(), "-o", "schema.d.ts").exit()).isZero();
    String types = """
        import type { components, paths } from "./schema";
        type DecideBody = paths["/v1/decisions"]["post"]["requestBody"]["content"]["application/json"];
        type Decision = paths["/v1/decisions"]["post"]["responses"]["200"]["content"]["application/json"];
        type BatchBody = paths["/v1/decisions/batch"]["post"]["requestBody"]["content"]["application/json"];
        """;
    Files.writeString(dir.resolve("seed.ts"), types + """
        const code: DecideBody = { recipient: "+8613800000000", content: "Your code is 1234" };
        const batch: BatchBody = { requests: [code, { recipient: "+8613800000001", channel: "sms" }] };
        const message: components["schemas"]["Message"] = { recipient: "+8613800000002" };
        function retryIn(d: Decision): number {
          return d.allowed ? 0 : d.retryAfterMs;
        }
        export { batch, message, retryIn };
        """);
    Run seed = run("tsc", "--noEmit", "--strict", "seed.ts");
    assertThat(seed.exit()).as(seed.output()).isZero();
    Files.writeString(dir.resolve("bad.ts"), types + """
        export const wrong: BatchBody = { requests: [{ recipient: 7 }] };
        """);
    Run bad = run("tsc", "--noEmit", "--strict", "bad.ts");
    assertThat(bad.exit()).as("a batch item of the wrong type compiles").isNotZero();
    assertThat(bad.output()).contains("bad.ts").contains("not assignable to type 'string'");
  }

  @Test
  void generatorsSeeTypedBatchesOptionalDefaultsAndBoundedIds() throws IOException {
    JsonNode d;
    try (InputStream in = spec().openStream()) {
      d = JSON.readTree(in);
    }
    JsonNode schemas = d.path("components").path("schemas");
    assertThat(schemas.at("/BatchRequest/properties/requests/items/$ref").asText())
        .isEqualTo("#/components/schemas/Message");
    List<String> defaults = new ArrayList<>();
    for (String request : List.of("Message", "DecideRequest", "BatchRequest", "ReleaseByMessageRequest")) {
      schemas.path(request).path("properties").properties().forEach(f -> {
        if (f.getValue().has("default")) {
          defaults.add(request + "." + f.getKey());
        }
      });
    }
    assertThat(defaults).as("request fields with a schema default (generated as required)").isEmpty();
    assertThat(schemas.at("/Decision/properties/decisionId/maxLength").asInt())
        .isEqualTo(DecisionService.MAX_DECISION_ID);
    d.path("tags").forEach(t -> assertThat(t.path("description").asText()).as(t.path("name").asText()).isNotBlank());
    assertThat(d.at("/info/license/identifier").asText()).isEqualTo("Apache-2.0");
  }

  private record Run(int exit, String output) {}

  private Run run(String... cmd) throws IOException, InterruptedException {
    assertThat(onPath(cmd[0])).as("%s is missing: install the pinned npm tools as scripts/test does "
        + "(npm install -g @redocly/cli@2.77.0 openapi-typescript@7.13.0 typescript@5.9.3)", cmd[0]).isTrue();
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(String.join(" ", cmd)).isTrue();
    return new Run(p.exitValue(), out);
  }

  private static boolean onPath(String tool) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
        return true;
      }
    }
    return false;
  }

  private static java.net.URL spec() {
    return OpenApiLintIT.class.getClassLoader().getResource("fcap/openapi.json");
  }
}
