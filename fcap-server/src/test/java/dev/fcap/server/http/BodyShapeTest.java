package dev.fcap.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.server.guard.ApiException;
import dev.fcap.server.guard.InputLimits;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link Json#parse} reads a body once and holds it to {@link InputLimits} as it goes. Random documents
 * (deep, wide, with attributes and ids near every limit) are checked against an oracle that walks the
 * plainly parsed tree in document order: the same first refusal (code and field), or, for a body
 * within every limit, the same tree as a parse without limits.
 */
class BodyShapeTest {
  private static final InputLimits SMALL = new InputLimits(5, 6, 8, 6, 1000);
  private static final Set<String> IDS = Set.of("recipient", "channel", "sender", "category", "contentKey");
  private static final String[] NAMES = {"recipient", "channel", "attributes", "content", "x", "requests",
      "contentKey", "sender", "category", "rules"};
  private static final JsonMapper PLAIN = new JsonMapper();

  @Test
  void randomBodiesAreRefusedExactlyWhereTheOracleSays() throws Exception {
    Random random = new Random(20261126);
    int refused = 0;
    int accepted = 0;
    for (int i = 0; i < 20_000; i++) {
      JsonNode doc = randomObject(random, 0);
      byte[] body = PLAIN.writeValueAsBytes(doc);
      String[] expected = firstViolation(doc);
      if (expected == null) {
        assertThat(Json.parse(body, SMALL, code -> {})).as("%s", doc).isEqualTo(PLAIN.readTree(body));
        accepted++;
      } else {
        assertThatThrownBy(() -> Json.parse(body, SMALL, code -> {})).as("%s", doc).isInstanceOfSatisfying(ApiException.class,
            e -> {
              assertThat(e.status()).isEqualTo(400);
              assertThat(e.code()).isEqualTo(expected[0]);
              assertThat(e.field()).isEqualTo(expected[1]);
            });
        refused++;
      }
    }
    // both outcomes are well represented, so neither half of the check is vacuous
    assertThat(refused).isGreaterThan(2_000);
    assertThat(accepted).isGreaterThan(2_000);
  }

  @Test
  void aHugeAttributesObjectIsRefusedAtTheFirstNamePastTheLimit() {
    StringBuilder b = new StringBuilder("{\"recipient\":\"r\",\"attributes\":{");
    for (int i = 0; i < 200_000; i++) {
      b.append(i == 0 ? "" : ",").append("\"a").append(i).append("\":\"v\"");
    }
    byte[] body = b.append("}}").toString().getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> Json.parse(body, InputLimits.defaults(), code -> {})).isInstanceOfSatisfying(ApiException.class,
        e -> assertThat(e.code()).isEqualTo("too_many_attributes"));
  }

  @Test
  void malformedDuplicatedAndTrailingBodiesAreInvalidJson() {
    for (String body : new String[] {"{\"recipient\": \"a\"", "{\"recipient\": \"a\", \"recipient\": \"b\"}",
        "{\"recipient\": \"a\"} x", "{\"recipient\": \"a\"} {\"recipient\": \"b\"}", "{\"recipient\": \"a\"} 1",
        "[1, 2,]", "   "}) {
      assertThatThrownBy(() -> Json.parse(body.getBytes(StandardCharsets.UTF_8), InputLimits.defaults(), code -> {}))
          .as(body).isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.code()).isEqualTo("invalid_json"));
    }
  }

  /** {code, field} of the first limit the document breaks, in the order its tokens are read; null if none. */
  private static String[] firstViolation(JsonNode doc) {
    return walk(doc, null, null, false, 1);
  }

  private static String[] walk(JsonNode node, String path, String name, boolean parentIsObject, int depth) {
    if (depth > SMALL.maxJsonDepth()) {
      return new String[] {"too_deep", path};
    }
    boolean attributes = node.isObject() && "attributes".equals(name) && parentIsObject;
    if (node.isObject()) {
      int members = 0;
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        members++;
        if (attributes && members > SMALL.maxAttributes()) {
          return new String[] {"too_many_attributes", path};
        }
        if (attributes && e.getKey().length() > SMALL.maxAttributeNameLength()) {
          return new String[] {"too_long", path};
        }
        String child = path == null ? e.getKey() : path + "." + e.getKey();
        JsonNode v = e.getValue();
        if (v.isTextual() && (attributes || IDS.contains(e.getKey())) && v.textValue().length() > SMALL.maxValueLength()) {
          return new String[] {"too_long", child};
        }
        String[] inner = v.isContainerNode() ? walk(v, child, e.getKey(), true, depth + 1) : null;
        if (inner != null) {
          return inner;
        }
      }
    } else {
      for (int i = 0; i < node.size(); i++) {
        JsonNode v = node.get(i);
        String child = (path == null ? "" : path) + "[" + i + "]";
        String[] inner = v.isContainerNode() ? walk(v, child, "[" + i + "]", false, depth + 1) : null;
        if (inner != null) {
          return inner;
        }
      }
    }
    return null;
  }

  private static ObjectNode randomObject(Random r, int depth) {
    ObjectNode o = JsonNodeFactory.instance.objectNode();
    int n = r.nextInt(depth == 0 ? 5 : 8);
    for (int i = 0; i < n; i++) {
      String name = r.nextInt(4) == 0 ? randomString(r, 9) : NAMES[r.nextInt(NAMES.length)];
      o.set(name, randomValue(r, depth + 1));
    }
    return o;
  }

  private static JsonNode randomValue(Random r, int depth) {
    int kind = r.nextInt(depth > 7 ? 5 : 8);
    return switch (kind) {
      case 0, 1 -> JsonNodeFactory.instance.textNode(randomString(r, 11));
      case 2 -> JsonNodeFactory.instance.numberNode(r.nextInt(1000) - 500);
      case 3 -> JsonNodeFactory.instance.booleanNode(r.nextBoolean());
      case 4 -> JsonNodeFactory.instance.nullNode();
      case 5, 6 -> randomObject(r, depth);
      default -> {
        ArrayNode a = JsonNodeFactory.instance.arrayNode();
        for (int i = r.nextInt(4); i > 0; i--) {
          a.add(randomValue(r, depth + 1));
        }
        yield a;
      }
    };
  }

  /** Up to {@code max} characters, sometimes past SMALL's limits, sometimes not ASCII. */
  private static String randomString(Random r, int max) {
    StringBuilder b = new StringBuilder();
    for (int i = r.nextInt(max + 1); i > 0; i--) {
      b.append(r.nextInt(10) == 0 ? (char) ('\u00e0' + r.nextInt(20)) : (char) ('a' + r.nextInt(26)));
    }
    return b.toString();
  }
}
