package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fcap.uri.Redaction;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RedactionTest {
  @Test
  void passwordsNeverReachTheLog() {
    assertThat(Redaction.uri("redis://user:s3cr3t@host:6379/0")).isEqualTo("redis://user:***@host:6379/0");
    assertThat(Redaction.uri("redis://:s3cr3t@host:6379")).isEqualTo("redis://:***@host:6379");
    assertThat(Redaction.uri("redis://s3cr3t@host:6379")).isEqualTo("redis://***@host:6379");
    assertThat(Redaction.uri("redis-sentinel://:pw@h1:26379,h2:26379#mymaster"))
        .isEqualTo("redis-sentinel://:***@h1:26379,h2:26379#mymaster").doesNotContain("pw@");
    assertThat(Redaction.uri("redis-cluster://h1:7000,h2:7001")).isEqualTo("redis-cluster://h1:7000,h2:7001");
    assertThat(Redaction.uri("memory")).isEqualTo("memory");
    assertThat(Redaction.uri("file:data/audit.jsonl")).isEqualTo("file:data/audit.jsonl");
    assertThat(Redaction.uri("cannot open 'redis://u:p/w@h:1' (twice: redis://u:q@w@h:2)"))
        .isEqualTo("cannot open 'redis://u:***@h:1' (twice: redis://u:***@h:2)");
  }

  /** Each character operators put in passwords, raw and percent-encoded, in every URI form. */
  @ParameterizedTest
  @ValueSource(strings = {"hunt/er2", "hunt@er2", "hunt:er2", "hunt?er2", "hunt#er2", "hunt%er2", "hunt%2Fer2",
      "a/b@c:d?e#f%g"})
  void everyPasswordCharacterIsHidden(String password) {
    for (String uri : List.of("redis://default:" + password + "@127.0.0.1:1",
        "redis://" + password + "@127.0.0.1:1", "rediss://default:" + password + "@127.0.0.1:1/0",
        "redis-sentinel://:" + password + "@127.0.0.1:1,127.0.0.1:2#mymaster",
        "redis-cluster://default:" + password + "@127.0.0.1:1,127.0.0.1:2")) {
      String shown = Redaction.uri(uri);
      assertThat(shown).as(uri).doesNotContain(password).contains("***@127.0.0.1:1");
      assertThat(Redaction.scrub("Lettuce says: bad URI " + uri + " with password " + password, uri))
          .as(uri).doesNotContain(password);
    }
  }

  /** A parser that cut a raw password at a delimiter quotes a piece of it: the piece is hidden too. */
  @Test
  void aPieceOfThePasswordThatAParserQuotesIsHidden() {
    String uri = "redis://default:hunt/er2@127.0.0.1:1";
    assertThat(Redaction.scrub("For input string: \"er2@127.0.0.1:1\"", uri))
        .doesNotContain("er2").contains("@127.0.0.1:1");
    assertThat(Redaction.scrub("bad port 'hunt'", uri)).doesNotContain("hunt");
  }

  /** An invalid store URI: an invalid store URI is refused without echoing its password. */
  @ParameterizedTest
  @ValueSource(strings = {"hunt/er2", "hunt@er2", "hunt:er2", "hunt?er2", "hunt#er2", "hunt%er2"})
  void anUnusableStoreUriIsRefusedWithoutItsPassword(String password) {
    String uri = "nosuchstore://default:" + password + "@127.0.0.1:1";
    for (String setting : List.of("store.uri", "rules.source", "audit.sink")) {
      ServerConfig config = ConfigLoader.load(null, Map.of(), Map.of(setting, uri, "listen", "127.0.0.1:0"));
      assertThatThrownBy(() -> FcapServer.start(config)).as(setting).hasMessageNotContaining(password)
          .hasMessageContaining("***");
    }
  }
}
