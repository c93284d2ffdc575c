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
 * scripts/test installs from npm) finds nothing to warn about, a batch's items are typed as messages,
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
    Process p = new ProcessBuilder("redocly", "lint", spec.toString(), "--format=stylish").directory(dir.toFile())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).contains("Your API description is valid").doesNotContain("You have")
        .doesNotContainPattern("(?m)^\\s+\\d+:\\d+\\s+(warning|error)");
  }

  @Test
  void generatorsSeeTypedBatchesOptionalDefaultsAndBoundedIds() throws IOException {
    JsonNode d = JSON.readTree(spec());
    JsonNode schemas = d.path("components").path("schemas");
    assertThat(schemas.at("/BatchRequest/properties/requests/items/$ref").asText())
        .isEqualTo("#/components/schemas/Message");
    List<String> defaults = new ArrayList<>();
    for (String request : List.of("Message", "DecideRequest", "BatchRequest", "ReleaseByMessageRequest")) {
      schemas.path(request).path("properties").fields().forEachRemaining(f -> {
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

  private static java.net.URL spec() {
    return OpenApiLintIT.class.getClassLoader().getResource("fcap/openapi.json");
  }
}
