package dev.fcap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Replay opens its store as {@code fcap serve} does, with a key prefix of its own on Redis. */
class ReplayStoreUriTest {

  @Test
  void theRunsPrefixJoinsTheUrisParameters() {
    assertThat(ReplayCommand.withPrefix("memory", "replay-1:")).isEqualTo("memory");
    assertThat(ReplayCommand.withPrefix("redis://h:6379/0", "replay-1:")).isEqualTo("redis://h:6379/0?prefix=replay-1:");
    assertThat(ReplayCommand.withPrefix("redis://h:6379?timeout=5s", "replay-1:"))
        .isEqualTo("redis://h:6379?timeout=5s&prefix=replay-1:");
    assertThat(ReplayCommand.withPrefix("redis-sentinel://h:26379/0#mymaster", "replay-1:"))
        .isEqualTo("redis-sentinel://h:26379/0?prefix=replay-1:#mymaster");
    assertThat(ReplayCommand.withPrefix("redis://u:hunt?er#2@h:6379/0", "replay-1:"))
        .as("a raw password's ? and # are not the URI's").isEqualTo("redis://u:hunt?er#2@h:6379/0?prefix=replay-1:");
    assertThat(ReplayCommand.withPrefix("redis-cluster://a:1,b:2", "replay-1:"))
        .isEqualTo("redis-cluster://a:1,b:2?prefix=replay-1:");
  }

  @Test
  void aPrefixOfTheCallersIsRefusedSoLiveCountersAreNeverTouched() {
    assertThatThrownBy(() -> ReplayCommand.withPrefix("redis://h:6379?prefix=fc:", "replay-1:"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("drop ?prefix=");
    assertThat(CliRun.fcap("replay", "--rules", "../examples/rules.yaml", "--log", "x.csv", "--store",
        "redis://127.0.0.1:1?prefix=fc:").err()).contains("cannot use --store").contains("drop ?prefix=");
  }

  /** A password holding {@code /} is read as a password: the error is about the address, without the password. */
  @Test
  void aPasswordWithASlashNeverReachesTheError() {
    String err = CliRun.fcap("replay", "--rules", "../examples/rules.yaml", "--log", "x.csv", "--store",
        "redis://default:hunt/er2@127.0.0.1:1").err();
    assertThat(err).contains("cannot use --store redis://default:***@127.0.0.1:1")
        .doesNotContain("er2").doesNotContain("hunt").doesNotContain("input string");
  }
}
